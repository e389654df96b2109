"""Power rules: PSU sustained and transient headroom, vendor floor, GPU power connectors, wall circuit."""

from __future__ import annotations

from planner.compat import power
from planner.catalog.models import Severity
from planner.compat.rules.base import (
    PERMISSIVE, Build, Encoder, Rule, ceil_div, gpu_power_w, gpu_vendor_floor_w, power_terms,
    psu_atx3_native, psu_efficiency_permille,
)


class PsuSustained(Rule):
    name = "psu_sustained"
    categories = ("psu", "gpu", "cpu")
    summary = ("sustained training load (GPUs at their limit, the CPU at a share of its package power) at most 80 % "
               "of the PSU rating (24/7 training is a continuous load)")

    def check(self, b: Build):
        psu, t = b.parts["psu"], power_terms(b)
        need = power.required_sustained_w(t.training_w)
        if psu.wattage_w >= need:
            return []
        return [self.finding(f"sustained training load {t.training_w} W (GPU {t.gpu_w} + CPU {t.cpu_training_w}, "
                             f"{power.TRAINING_CPU_FRACTION:.0%} of its {t.cpu_w} W package power, + rest {t.rest_w}) is "
                             f"{t.training_w / psu.wattage_w:.0%} of the {psu.wattage_w} W PSU; 80 % needs at least "
                             f"{need} W", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        p = m.power()
        m.model.Add(5 * p["training_w"] <= 4 * m.attr("psu", lambda s: s.wattage_w))


class PsuTransient(Rule):
    name = "psu_transient"
    categories = ("psu", "gpu", "cpu")
    summary = "PSU rides through 100 us GPU excursions (ATX 3.x + native 12V-2x6: 200 %; else 1.47 x sustained)"

    def check(self, b: Build):
        psu, t = b.parts["psu"], power_terms(b)
        native = psu_atx3_native(psu)
        need = power.required_transient_w(t.gpu_w, t.other_w, atx3_native=native)
        if psu.wattage_w >= need:
            return []
        if native:
            why = (f"GPU excursions of 3 x {t.gpu_w} W plus {t.other_w} W reach {3 * t.gpu_w + t.other_w} W; an ATX 3.x "
                   f"unit carries 200 % of its rating for 100 us, so it needs at least {need} W")
        else:
            if psu.atx_version is None:
                kind = "a PSU of unknown ATX version"
            elif psu.atx_version == "2.x":
                kind = "an ATX 2.x unit"
            elif not psu.connectors_12v2x6:
                kind = "an ATX 3.x unit without a native 12V-2x6 cable"
            else:
                kind = f"an ATX 3.x unit of {power.ATX3_MIN_W} W or less (the 200 % rule starts above {power.ATX3_MIN_W} W)"
            why = (f"{kind} has no 200 % excursion guarantee: {power.ATX2_RATIO} x {t.sustained_w} W sustained needs "
                   f"at least {need} W")
        return [self.finding(f"{psu.wattage_w} W PSU too small for transients: {why}", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        p = m.power()
        watts = m.attr("psu", lambda s: s.wattage_w)
        native = m.model_bool(m.has("psu", psu_atx3_native, unknown=False))
        m.model.Add(2 * watts >= 3 * p["gpu_w"] + p["cpu_w"] + p["rest_w"]).OnlyEnforceIf(native)
        m.model.Add(100 * watts >= 147 * p["sustained_w"]).OnlyEnforceIf(native.Not())


class PsuVendorFloor(Rule):
    name = "psu_vendor_floor"
    categories = ("psu", "gpu")
    summary = "PSU at least the GPU vendor's recommended system PSU (single-GPU builds)"

    def applies(self, b: Build) -> bool:
        return super().applies(b) and b.gpu_count == 1

    def check(self, b: Build):
        psu, gpu = b.parts["psu"], b.parts["gpu"]
        floor = gpu_vendor_floor_w(gpu, b.chips)
        if psu.wattage_w >= floor:
            return []
        return [self.finding(f"{psu.wattage_w} W PSU is below the {floor} W the GPU vendor recommends for this card",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        if m.gpu_count == 1:
            m.model.Add(m.attr("psu", lambda s: s.wattage_w) >= m.attr("gpu", lambda g: gpu_vendor_floor_w(g, m.chips)))


def adapter_8pins(gpu) -> int | None:
    """8-pin cables a 16-pin card needs through an adapter; None where an adapter is not acceptable."""
    stock = gpu.tgp_w
    if not gpu.power_12v2x6 or stock is None or stock > power.NATIVE_16PIN_ABOVE_W:
        return None
    return ceil_div(stock, power.PCIE_8PIN_W)


def gpu_stock_w(gpu, chips) -> int:
    """The card's stock board power: what its cable carries whatever limit software sets."""
    return gpu.tgp_w or chips[gpu.chip].tdp_w


class GpuConnectors(Rule):
    name = "gpu_connectors"
    categories = ("psu", "gpu")
    strict_unknown = True
    summary = ("one PSU cable per GPU input: native 12V-2x6 rated for the card (450 W cables only up to 450 W cards) "
               "for 16-pin cards above 450 W, separate 8-pin cables")

    def check(self, b: Build):
        psu, gpu, n = b.parts["psu"], b.parts["gpu"], b.gpu_count
        missing = ([gpu.id] if gpu.power_12v2x6 is None and gpu.power_8pin is None else []) + \
            ([psu.id] if psu.connectors_12v2x6 is None or psu.connectors_8pin is None else [])
        if missing:
            what = " and ".join(w for w, pid in (("GPU power connectors", gpu.id), ("PSU connector counts", psu.id))
                                if pid in missing)
            return [self.unverified(what, missing)]
        per16, need8 = gpu.power_12v2x6 or 0, n * (gpu.power_8pin or 0)
        need16, stock, adapt = n * per16, gpu_stock_w(gpu, b.chips), adapter_8pins(gpu)

        def natives(rated: bool) -> int:
            """Cards fed by native cables: as many as the PSU has, when its cables are rated for the card."""
            return n if per16 == 0 else (min(n, psu.connectors_12v2x6 // per16) if rated else 0)

        def fits(rated: bool) -> bool:
            """Native cables for as many cards as they go round, an adapter (<= 450 W cards) for each other card."""
            k = natives(rated)
            if k == n and psu.connectors_8pin >= need8:
                return True
            return adapt is not None and psu.connectors_8pin >= need8 + (n - k) * adapt

        rated = per16 == 0 or (psu.cable_12v2x6_w is not None and psu.cable_12v2x6_w >= stock)
        if fits(rated):
            return []
        if psu.cable_12v2x6_w is None and fits(True):
            return [self.unverified("PSU 12V-2x6 cable rating", [psu.id])]
        counts_ok = psu.connectors_12v2x6 >= need16 and psu.connectors_8pin >= need8
        if counts_ok:
            msg = (f"the PSU's 16-pin cables are rated {psu.cable_12v2x6_w} W, the card draws up to {stock} W: a cable "
                   "run above its rating is how 16-pin connectors melt")
        elif need16 > psu.connectors_12v2x6:
            k = natives(rated)
            if adapt is None:
                extra = f"; a {gpu.tgp_w} W card needs a native cable, no adapter"
            elif k == 0:
                extra = (f"; an adapter would need {need8 + n * adapt} separate 8-pin cables, the PSU has "
                         f"{psu.connectors_8pin}")
            else:
                extra = (f"; adapters for the {n - k} card(s) beyond its native cables would need "
                         f"{need8 + (n - k) * adapt} separate 8-pin cables, the PSU has {psu.connectors_8pin}")
            msg = f"{need16} native 12V-2x6 input(s) needed, the PSU has {psu.connectors_12v2x6}{extra}"
        else:
            msg = f"{need8} separate PCIe 8-pin cables needed, the PSU has {psu.connectors_8pin}"
        return [self.finding(msg, b.ids(*self.categories))]

    def encode(self, m: Encoder):
        n = m.gpu_count
        psu_unknown = lambda s: s.connectors_12v2x6 is None or s.connectors_8pin is None  # noqa: E731
        gpu_unknown = lambda g: g.power_12v2x6 is None and g.power_8pin is None  # noqa: E731
        # unknown is not yes: a part whose connectors are unknown is left out unless pinned (or, in the solver's
        # unverified fallback, trusted: m.strict says which)
        m.model.Add(m.strict("psu", lambda s: None if psu_unknown(s) else 0, fail=1, passing=0) == 0)
        m.model.Add(m.strict("gpu", lambda g: None if gpu_unknown(g) else 0, fail=1, passing=0) == 0)
        have16 = m.attr("psu", lambda s: None if psu_unknown(s) else s.connectors_12v2x6)
        have8 = m.attr("psu", lambda s: None if psu_unknown(s) else s.connectors_8pin)
        cable = m.strict("psu", lambda s: None if psu_unknown(s) else s.cable_12v2x6_w, fail=0)
        per16 = m.attr("gpu", lambda g: None if gpu_unknown(g) else (g.power_12v2x6 or 0), unknown=0)
        need8 = m.attr("gpu", lambda g: None if gpu_unknown(g) else n * (g.power_8pin or 0), unknown=0)
        need_cable = m.attr("gpu", lambda g: gpu_stock_w(g, m.chips) if (g.power_12v2x6 or 0) > 0 else 0)
        # 8-pin cables one card takes through an adapter (none for 8-pin cards; a > 450 W card may not use one)
        per_adapter = m.attr("gpu", lambda g: None if gpu_unknown(g) else (
            0 if not g.power_12v2x6 else (adapter_8pins(g) if adapter_8pins(g) is not None else PERMISSIVE)), unknown=0)
        # one option per number k of cards on native cables, the other n - k on adapters (check(): natives())
        options = []
        for k in range(n + 1):
            lit = m.bool_var(f"gpu_native_cables_{k}")
            options.append(lit)
            if k:
                m.model.Add(have16 >= k * per16).OnlyEnforceIf(lit)
                m.model.Add(cable >= need_cable).OnlyEnforceIf(lit)
            m.model.Add(have8 >= need8 + (n - k) * per_adapter).OnlyEnforceIf(lit)
        any_option = options[0]
        for lit in options[1:]:
            any_option = any_option + lit
        m.model.Add(any_option >= 1)


ADAPTER_FEED_W = 300  # workstation cards at 300 W ship with an 8-pin adapter as their intended feed


def cards_on_adapters(psu, gpu, n: int) -> int:
    """16-pin cards beyond the PSU's native 12V-2x6 cables, fed through the 8-pin adapter (0 when unknown or when the
    card takes 8-pin plugs)."""
    if not gpu.power_12v2x6 or psu.connectors_12v2x6 is None:
        return 0
    return max(0, n - psu.connectors_12v2x6 // gpu.power_12v2x6)


class GpuAdapter(Rule):
    """A 16-pin card beyond the PSU's native 12V-2x6 cables runs on an 8-pin adapter: allowed up to 450 W (the
    connector rule), but an extra joint in the hottest cable of the build; a builder buys a unit with one native cable
    per card."""

    name = "gpu_adapter"
    severity = Severity.WARNING
    categories = ("psu", "gpu")
    summary = "one native 12V-2x6 cable per 16-pin card (no 8-pin adapter)"

    @staticmethod
    def wanted(gpu, chips) -> bool:
        """A consumer 16-pin card that may run on an adapter (<= 450 W) but draws more than the 300 W workstation cards
        whose maker ships the 8-pin adapter as their intended feed (RTX 6000 Ada, RTX A-series)."""
        return bool(gpu.power_12v2x6) and adapter_8pins(gpu) is not None and gpu_stock_w(gpu, chips) > ADAPTER_FEED_W

    def short(self, psu, gpu, n: int, chips) -> int:
        """Cards that would run on an adapter: 16-pin inputs wanted beyond the native cables (0 when unknown)."""
        return cards_on_adapters(psu, gpu, n) if self.wanted(gpu, chips) else 0

    def check(self, b: Build):
        psu, gpu, n = b.parts["psu"], b.parts["gpu"], b.gpu_count
        k = self.short(psu, gpu, n, b.chips)
        if not k:
            return []
        return [self.finding(f"{k} of the {n} cards would run on an 8-pin-to-16-pin adapter: the PSU has "
                             f"{psu.connectors_12v2x6} native 12V-2x6 cable(s) for {n * gpu.power_12v2x6} 16-pin "
                             "input(s); pick a unit with one native cable per card", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        n = m.gpu_count
        have16 = m.attr("psu", lambda s: s.connectors_12v2x6)
        need16 = m.attr("gpu", lambda g: n * g.power_12v2x6 if self.wanted(g, m.chips) else 0, unknown=0)
        m.model.Add(have16 >= need16)


class PsuClass(Rule):
    name = "psu_class"
    severity = Severity.WARNING
    categories = ("psu", "gpu")
    summary = (f"an ATX 3.1 unit with native 12V-2x6 for cards above {power.NATIVE_16PIN_ABOVE_W} W "
               "(the revision that pairs with the 12V-2x6 connector)")

    @staticmethod
    def wanted(gpu, chips) -> bool:
        return gpu_stock_w(gpu, chips) > power.NATIVE_16PIN_ABOVE_W

    @staticmethod
    def good(psu) -> bool:
        return psu.atx_version == "3.1" and (psu.connectors_12v2x6 or 0) >= 1

    def check(self, b: Build):
        psu, gpu = b.parts["psu"], b.parts["gpu"]
        if not self.wanted(gpu, b.chips) or self.good(psu):
            return []
        return [self.finding(f"a {gpu_stock_w(gpu, b.chips)} W card on an ATX {psu.atx_version or '(unknown)'} unit: "
                             "buy an ATX 3.1 unit with native 12V-2x6 cables for a card this size",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.has("gpu", lambda g: self.wanted(g, m.chips)) <= m.has("psu", self.good, unknown=False))


PSU_OVERSIZE_RATIO = 2  # issue 26: a builder orders 1 300-1 600 W for 900-1 000 W of training load, not 2 200 W
PSU_OVERSIZE_FLOOR_W = 1000  # below 500 W of load the cap would exclude the ATX 3.1 units with native 12V-2x6 cables
# (750-1 000 W); the efficiency lost at 40 % load is a few watts (hardware-facts §1.5 curves)


def psu_oversize_cap_w(training_w: int) -> int:
    """The largest sensible rating for a training load: 2x the load, and never below 1 000 W."""
    return max(PSU_OVERSIZE_RATIO * training_w, PSU_OVERSIZE_FLOOR_W)


class PsuRightSized(Rule):
    name = "psu_right_sized"
    severity = Severity.WARNING
    categories = ("psu", "gpu", "cpu")
    summary = (f"PSU rating at most {PSU_OVERSIZE_RATIO}x the training load (or {PSU_OVERSIZE_FLOOR_W} W): a larger "
               "unit buys nothing but idle capacity, and runs below its efficient band")

    def check(self, b: Build):
        psu, t = b.parts["psu"], power_terms(b)
        cap = psu_oversize_cap_w(t.training_w)
        if psu.wattage_w <= cap:
            return []
        return [self.finding(f"a {psu.wattage_w} W PSU for {t.training_w} W of training load "
                             f"({t.training_w / psu.wattage_w:.0%} load): {cap} W or less does the job; the money "
                             "is better spent elsewhere", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        watts = m.attr("psu", lambda s: s.wattage_w)  # a pinned or owned unit too (--accept-warning psu_right_sized)
        small = m.bool_var("psu_under_floor")
        m.model.Add(watts <= PSU_OVERSIZE_FLOOR_W).OnlyEnforceIf(small)
        m.model.Add(watts <= PSU_OVERSIZE_RATIO * m.power()["training_w"]).OnlyEnforceIf(small.Not())


class WallCircuit(Rule):
    name = "wall_circuit"
    categories = ("psu", "gpu", "cpu")
    summary = f"wall draw within a household circuit ({power.CIRCUIT_VOLTS} V x {power.CIRCUIT_AMPS} A x 80 %)"

    def check(self, b: Build):
        psu, t = b.parts["psu"], power_terms(b)
        limit = power.circuit_limit_w()
        eff = psu_efficiency_permille(psu)
        if t.sustained_w * 1000 <= limit * eff:
            return []
        return [self.finding(f"about {t.sustained_w * 1000 / eff:.0f} W at the wall exceeds the {limit} W a "
                             f"{power.CIRCUIT_VOLTS} V / {power.CIRCUIT_AMPS} A circuit carries continuously",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(1000 * m.power()["sustained_w"] <= power.circuit_limit_w() * m.attr("psu", psu_efficiency_permille))


RULES = [PsuSustained(), PsuTransient(), PsuVendorFloor(), GpuConnectors(), GpuAdapter(), PsuClass(), PsuRightSized(), WallCircuit()]
_ = gpu_power_w
