"""Recognise bot-wall and captcha pages (PerimeterX, DataDome, Cloudflare, Akamai, Amazon) so they never give a price."""

from __future__ import annotations

import re

# Titles/headlines that only block pages carry.
_BLOCK_TITLE = re.compile(
    r"access to this page has been denied|verify your identity|are you (a )?human|robot check|"
    r"attention required|just a moment|pardon our interruption|access denied|request blocked|"
    r"security check|captcha|vérification de sécurité|accès refusé|un instant|bot or not|"
    r"please verify you are a human|checking your browser|ddos-guard|são humano|sind sie ein mensch",
    re.I,
)
# Vendor fingerprints in the markup.
_BLOCK_MARKUP = re.compile(
    r"px-captcha|perimeterx|_pxAppId|captcha-delivery\.com|geo\.captcha|datadome|cf-chl-|"
    r"challenge-platform|cf_chl_opt|/errors/validateCaptcha|g-recaptcha|h-captcha|hcaptcha\.com|"
    r"distil_r_captcha|_Incapsula_Resource|incapsula|akamai.{0,40}reference|sec-if-cpt|"
    r"Reference&#32;&#35;|errors\.edgesuite\.net",
    re.I,
)
# Sentences a block page says to the visitor.
_BLOCK_TEXT = re.compile(
    r"we believe you are using automation|enter the characters you see below|"
    r"sorry, we just need to make sure you'?re not a robot|keep robots off|unusual traffic|"
    r"you don'?t have permission to access|verify you are (a )?human|complete the security check|"
    r"enable (javascript|cookies) (and cookies )?to continue|press (&|and) hold|"
    r"nous avons détecté un trafic inhabituel|vous êtes un robot|robot\?",
    re.I,
)


def is_blocked(title: str, visible_text: str, source: str, has_product_data: bool) -> bool:
    """True for a bot wall: a block title or sentence plus a vendor fingerprint, on a page with no product.

    A real product page can embed reCAPTCHA for a newsletter form, so a fingerprint alone is not enough
    when the page carries product data or a lot of text.
    """
    if has_product_data:
        return False
    text = visible_text[:5000]
    short = len(visible_text) < 30000 and len(" ".join(visible_text.split())) < 3000
    title_hit = bool(_BLOCK_TITLE.search(title))
    text_hit = bool(_BLOCK_TEXT.search(text))
    if not (title_hit or text_hit or short):
        return False
    markup_hit = bool(_BLOCK_MARKUP.search(source[:200000]))
    if title_hit and (markup_hit or text_hit or short):
        return True
    if text_hit and (markup_hit or short):
        return True
    return markup_hit and short and bool(re.search(r"captcha|robot|human|blocked|denied", text, re.I))
