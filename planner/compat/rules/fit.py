"""Physical-fit rules: board form factor, GPU length and slots, cooler height, RAM under the cooler, radiators, PSU size."""

from __future__ import annotations

from planner.catalog.models import FORM_FACTORS, Severity
from planner.compat.rules.base import (
    PERMISSIVE, Build, Encoder, Rule, ValueAccepted, build_radiator_mm, fmt_mm, front_loss_mm, gpu_radiator_mm, mm,
    intake_radiator_position, radiator_extra_mm, radiator_front_only, slots_needed,
)


class BoardFitsCase(ValueAccepted):
    name = "board_form_factor"
    categories = ("motherboard", "case")
    summary = "the case takes the board's form factor"
    holder, acceptor, domain = "motherboard", "case", FORM_FACTORS

    def value(self, mb):
        return mb.form_factor

    def accepted(self, case):
        return tuple(case.form_factors or ())

    def message(self, mb, case):
        return (f"{mb.form_factor} board does not fit the case, which takes "
                f"{', '.join(case.form_factors) or 'no listed form factor'}")


class GpuLengthFitsCase(Rule):
    name = "gpu_length"
    categories = ("gpu", "case")
    summary = "card length within the case clearance, less a front radiator where one is mounted"

    def _front(self, b: Build) -> bool:
        """An intake radiator at the front (a bottom one does not shorten the cards' room)."""
        case = b.parts["case"]
        return bool(radiator_front_only(b.get("cooler"), case, b.get("gpu"))) and intake_radiator_position(case) == "front"

    def check(self, b: Build):
        gpu, case = b.parts["gpu"], b.parts["case"]
        if gpu.length_mm is None or case.max_gpu_length_mm is None:
            return [self.unverified("GPU length or case GPU clearance", b.ids(*self.categories))]
        limit = mm(case.max_gpu_length_mm)
        why = ""
        if self._front(b):
            loss = front_loss_mm(case) + radiator_extra_mm(b.get("cooler"))
            limit -= loss * 10
            why = f" (case maximum {fmt_mm(mm(case.max_gpu_length_mm))} less {loss} mm for the front radiator and fans)"
        if mm(gpu.length_mm) <= limit:
            return []
        return [self.finding(f"card length {fmt_mm(mm(gpu.length_mm))} exceeds the case maximum of "
                             f"{fmt_mm(limit)}{why}", b.ids("gpu", "case", "cooler"))]

    def encode(self, m: Encoder):
        length = m.attr("gpu", lambda g: mm(g.length_mm) if g.length_mm is not None else None, unknown=0)
        limit = m.attr("case", lambda c: mm(c.max_gpu_length_mm) if c.max_gpu_length_mm is not None else None)
        at_front = m.has("case", lambda c: intake_radiator_position(c) == "front", unknown=False)
        loss = m.attr("case", lambda c: front_loss_mm(c) * 10) + m.attr("cooler", lambda c: radiator_extra_mm(c) * 10)
        m.model.Add(length <= limit)
        m.model.Add(length <= limit - loss).OnlyEnforceIf([m.front_radiator(), m.model_bool(at_front)])


class GpuSlotsFitCase(Rule):
    name = "gpu_slots"
    categories = ("gpu", "case")
    summary = "the cards' slot width fits the case's expansion slots"

    def check(self, b: Build):
        gpu, case = b.parts["gpu"], b.parts["case"]
        if gpu.slots is None or case.expansion_slots is None:
            return [self.unverified("GPU slot width or case expansion slots", b.ids(*self.categories))]
        need = slots_needed(gpu, b.gpu_count)
        if need <= case.expansion_slots:
            return []
        what = f"{b.gpu_count} x {gpu.slots:g}-slot cards need {need} slots" if b.gpu_count > 1 else \
            f"a {gpu.slots:g}-slot card needs {need} slots"
        return [self.finding(f"{what} but the case has {case.expansion_slots}", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        need = m.attr("gpu", lambda g: slots_needed(g, m.gpu_count) if g.slots is not None else None, unknown=0)
        have = m.attr("case", lambda c: c.expansion_slots)
        m.model.Add(need <= have)


class AirCoolerHeight(Rule):
    name = "cooler_height"
    categories = ("cooler", "case")
    summary = "an air cooler's height within the case's cooler clearance"

    def check(self, b: Build):
        cooler, case = b.parts["cooler"], b.parts["case"]
        if cooler.type != "air":
            return []
        if cooler.height_mm is None or case.max_cooler_height_mm is None:
            return [self.unverified("cooler height or case cooler clearance", b.ids(*self.categories))]
        if mm(cooler.height_mm) <= mm(case.max_cooler_height_mm):
            return []
        return [self.finding(f"air cooler height {fmt_mm(mm(cooler.height_mm))} exceeds the case maximum of "
                             f"{fmt_mm(mm(case.max_cooler_height_mm))}", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        h = m.attr("cooler", lambda c: (mm(c.height_mm) if c.height_mm is not None else None) if c.type == "air" else 0,
                   unknown=0)
        m.model.Add(h <= m.attr("case", lambda c: mm(c.max_cooler_height_mm) if c.max_cooler_height_mm else None))


NO_OVERHANG = 10 * PERMISSIVE  # a cooler that leaves the DIMM slots free takes a module of any height


def ram_limit_mm(cooler) -> int | None:
    """Tallest module (tenths of mm) under the cooler; None when an air cooler's overhang or clearance is unknown."""
    if cooler.type != "air" or cooler.ram_overhang is False:
        return NO_OVERHANG
    if cooler.ram_overhang is None or cooler.ram_clearance_mm is None:
        return None
    return mm(cooler.ram_clearance_mm)


class RamUnderCooler(Rule):
    name = "ram_clearance"
    categories = ("memory", "cooler")
    strict_unknown = True
    summary = "memory modules no taller than the clearance under an air cooler that overhangs the DIMM slots"

    def check(self, b: Build):
        mem, cooler = b.parts["memory"], b.parts["cooler"]
        limit = ram_limit_mm(cooler)
        if limit == NO_OVERHANG:
            return []
        if limit is None or mem.height_mm is None:
            missing = [cooler.id] if limit is None else []
            missing += [mem.id] if mem.height_mm is None else []
            return [self.unverified("memory module height or the air cooler's RAM clearance", missing)]
        if mm(mem.height_mm) <= limit:
            return []
        return [self.finding(f"{fmt_mm(mm(mem.height_mm))} memory modules are taller than the "
                             f"{fmt_mm(limit)} clearance under the cooler's overhang; choose lower modules, "
                             "a cooler that leaves the DIMM slots free, or raise its front fan (taller build)",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        # unknown on an unpinned part fails against an overhanging cooler; a pinned part's unknown passes
        height = m.strict("memory", lambda p: mm(p.height_mm) if p.height_mm is not None else None,
                          fail=PERMISSIVE + 1, passing=0)
        m.model.Add(height <= m.strict("cooler", ram_limit_mm, fail=-PERMISSIVE, passing=PERMISSIVE))


class RadiatorMount(Rule):
    name = "radiator_mount"
    categories = ("cooler", "case")
    summary = "the liquid radiator (CPU AIO or hybrid GPU) has a mount: top/rear first, else front; one per build"

    def applies(self, b: Build) -> bool:
        return b.has("case") and (b.has("cooler") or b.has("gpu"))

    def check(self, b: Build):
        cooler, case, gpu = b.get("cooler"), b.parts["case"], b.get("gpu")
        gpu_rad = gpu_radiator_mm(gpu)
        cpu_aio = cooler is not None and cooler.type == "aio"
        if gpu_rad is not None and b.gpu_count > 1:
            return [self.finding(f"{b.gpu_count} hybrid cards bring {b.gpu_count} radiators: this planner fits one "
                                 "radiator per case; choose air-cooled cards for several GPUs", b.ids("gpu", "case"))]
        if cpu_aio and gpu_rad is not None:
            return [self.finding(f"{cooler.radiator_mm} mm CPU radiator and the card's own {gpu_rad} mm radiator: "
                                 "this planner fits one radiator per case; choose an air cooler or another card",
                                 b.ids("cooler", "gpu", "case"))]
        size = build_radiator_mm(cooler, gpu)
        if size is None:
            return []
        if not (case.radiator_top or case.radiator_front or case.radiator_rear or case.radiator_bottom):
            return [self.unverified("case radiator support", b.ids(*self.categories))]
        if radiator_front_only(cooler, case, gpu) is not None:
            return []
        spots = "; ".join(f"{k} {'/'.join(map(str, v))}" for k, v in
                          (("top", case.radiator_top), ("front", case.radiator_front), ("rear", case.radiator_rear),
                           ("bottom", case.radiator_bottom)) if v)
        whose = "" if cpu_aio else " (the graphics card's own)"
        return [self.finding(f"{size} mm radiator{whose} has no mount in the case (supports {spots or 'none'} mm)",
                             b.ids("cooler", "gpu", "case") if whose else b.ids(*self.categories))]

    def encode(self, m: Encoder):
        front = m.front_radiator()
        unknown_case = m.has("case", lambda c: not (c.radiator_top or c.radiator_front or c.radiator_rear or c.radiator_bottom),
                             unknown=False)
        aio = m.has("cooler", lambda c: c.type == "aio")
        hybrid = m.has("gpu", lambda g: gpu_radiator_mm(g) is not None, unknown=False)
        if m.gpu_count > 1:
            m.model.Add(hybrid == 0)
        m.model.Add(aio + hybrid <= 1)
        m.model.Add(front <= aio + hybrid)
        m.model.Add(front == 0).OnlyEnforceIf(m.model_bool(unknown_case))
        sizes = {c.radiator_mm for c in m.candidates("cooler") if c.type == "aio"}
        sizes |= {gpu_radiator_mm(g) for g in m.candidates("gpu") if gpu_radiator_mm(g) is not None}
        for size in sorted(sizes):
            rad = (m.has("cooler", lambda c, s=size: c.type == "aio" and c.radiator_mm == s)
                   + m.has("gpu", lambda g, s=size: gpu_radiator_mm(g) == s, unknown=False))
            top = m.has("case", lambda c, s=size: s in c.radiator_top or s in c.radiator_rear)
            fr = m.has("case", lambda c, s=size: s in c.radiator_front or s in c.radiator_bottom)
            # the radiator fitted not in the intake needs a top/rear mount; in the intake, a front or bottom mount.
            m.model.Add(rad - front <= top + unknown_case)
            m.model.Add(rad + front - 1 <= fr)


class PsuFitsCase(Rule):
    name = "psu_fit"
    categories = ("psu", "case")
    summary = "PSU form factor and length fit the case"

    def check(self, b: Build):
        psu, case = b.parts["psu"], b.parts["case"]
        out = []
        if psu.form_factor == "ATX" and "ATX" not in case.psu_form_factors:
            out.append(self.finding(f"ATX PSU does not fit the case, which takes {', '.join(case.psu_form_factors)}",
                                    b.ids(*self.categories)))
        if psu.length_mm is None or case.max_psu_length_mm is None:
            if psu.form_factor == "ATX" or psu.length_mm is not None:
                out.append(self.unverified("PSU length or case PSU clearance", b.ids(*self.categories)))
        elif mm(psu.length_mm) > mm(case.max_psu_length_mm):
            out.append(self.finding(f"PSU length {fmt_mm(mm(psu.length_mm))} exceeds the case maximum of "
                                    f"{fmt_mm(mm(case.max_psu_length_mm))}", b.ids(*self.categories)))
        return out

    def encode(self, m: Encoder):
        m.model.Add(m.has("psu", lambda p: p.form_factor == "ATX")
                    <= m.has("case", lambda c: "ATX" in c.psu_form_factors))
        m.model.Add(m.attr("psu", lambda p: mm(p.length_mm) if p.length_mm is not None else None, unknown=0)
                    <= m.attr("case", lambda c: mm(c.max_psu_length_mm) if c.max_psu_length_mm is not None else None))


class PsuBracket(Rule):
    """An SFX or SFX-L unit in a case built for ATX units hangs on an SFX-to-ATX bracket: often not in the box, and an
    ATX unit of the same rating costs less and runs cooler."""

    name = "psu_bracket"
    severity = Severity.WARNING
    categories = ("psu", "case")
    summary = "a small (SFX) PSU only in a case with an SFX mount; in an ATX case, an ATX unit"

    @staticmethod
    def misfit(psu, case) -> bool:
        return psu.form_factor in ("SFX", "SFX-L") and psu.form_factor not in (case.psu_form_factors or ())

    def check(self, b: Build):
        psu, case = b.parts["psu"], b.parts["case"]
        if not self.misfit(psu, case):
            return []
        return [self.finding(f"{psu.form_factor} PSU in a case that takes {', '.join(case.psu_form_factors)} units: "
                             "it needs an SFX-to-ATX bracket (check it is in the box); an ATX unit of the same rating "
                             "usually costs less", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        for ff in ("SFX", "SFX-L"):
            m.model.Add(m.has("psu", lambda p, f=ff: p.form_factor == f)
                        <= m.has("case", lambda c, f=ff: f in (c.psu_form_factors or ())))


RULES = [BoardFitsCase(), GpuLengthFitsCase(), GpuSlotsFitCase(), AirCoolerHeight(), RamUnderCooler(), RadiatorMount(),
         PsuFitsCase(), PsuBracket()]
_ = PERMISSIVE
