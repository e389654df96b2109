"""Rules for months of 24/7 load: board power delivery against the CPU, case airflow against the heat."""

from __future__ import annotations

from planner.catalog.models import Severity
from planner.compat.rules.base import (Build, Encoder, Rule, build_radiator_mm, cooler_fans, gpu_power_w,
                                       gpu_radiator_mm, intake_radiator_position, power_terms, radiator_front_only)

# Heat one unit of airflow carries out of a case: Q = rho * cp * V * dT with air at 1.2 kg/m3, 1005 J/(kg K),
# 1 CFM = 0.000472 m3/s and a 10 K rise from intake to exhaust: 1.2 * 1005 * 0.000472 * 10 = 5.69 W per CFM.
# (Air properties: standard tables; the 10 K rise is our choice for a room at 25 C keeping GPU intake <= 35 C.)
W_PER_CFM_TENTHS = 57  # 5.7 W per CFM, in tenths


# A blower card pushes most of its heat out through its own bracket, not into the case; the rest (board, backplate,
# the air it draws in and warms) stays. The share exhausted is our estimate (no measured figure found): 80 %.
BLOWER_EXHAUST_TENTHS = 8


def gpu_heat_exhausted_w(gpu, chips, power_fraction: float) -> int:
    """Heat one card sends straight out of the case: most of a blower card's power, none of an open-air card's."""
    if gpu.cooling != "blower":
        return 0
    return gpu_power_w(gpu, chips, power_fraction) * BLOWER_EXHAUST_TENTHS // 10


def case_heat_capacity_w(case) -> int | None:
    """Sustained heat the case's intake airflow removes at a 10 K air temperature rise (docs/rules.md)."""
    if case.intake_cfm is None:
        return None
    return int(case.intake_cfm * W_PER_CFM_TENTHS) // 10


# Intake airflow one fan moves through a case's filter and mesh, by size (mm -> CFM): the rates data/case.csv's
# intake_cfm estimates use (about 70 % of free-air ratings; 40 per 120 mm, 50 per 140 mm; the 160 and 180 mm figures
# are what the Lancool 216 and Torrent rows count). Estimates, as those rows say.
FAN_CFM = {120: 40, 140: 50, 160: 65, 180: 100, 200: 110}
# A radiator's fins resist the flow its fans push: the share lost is our estimate (no measured figure for these
# radiators found; fan makers' pressure-flow curves put a dense radiator at a third or more).
RADIATOR_LOSS_TENTHS = 3
W_PER_CFM_K_THOUSANDTHS = 569  # 1.2 kg/m3 * 1005 J/(kg K) * 0.000472 m3/s per CFM: W carried per CFM per kelvin


def radiator_fan_mm(radiator_mm: int) -> int:
    return 140 if radiator_mm % 140 == 0 else 120


def radiator_fans_cfm(cooler, gpu) -> int:
    """Intake CFM of the build's radiator fans as free of the radiator (0 without one)."""
    if cooler is not None and cooler.type == "aio" and cooler.radiator_mm:
        fans, size = cooler_fans(cooler), cooler.radiator_mm
    elif gpu_radiator_mm(gpu) is not None:
        size = gpu_radiator_mm(gpu)
        fans = max(1, size // radiator_fan_mm(size))
    else:
        return 0
    return fans * FAN_CFM[radiator_fan_mm(size)]


def radiator_cfm(cooler, gpu) -> int:
    """The same through the radiator, after its fins."""
    return radiator_fans_cfm(cooler, gpu) * (10 - RADIATOR_LOSS_TENTHS) // 10


def shipped_intake_cfm(case) -> int | None:
    """CFM of the fans the case ships at the position an intake radiator takes (None: not recorded)."""
    fans = case.shipped_intake(intake_radiator_position(case))
    return None if fans is None else fans[0] * FAN_CFM[fans[1]]


def intake_with_radiator_tenths(case, cooler, gpu) -> int | None:
    """The case's intake in tenths of a CFM with the build's radiator in its intake: the radiator's fans replace the
    fans shipped there (where those are not recorded, as many fans as its own) and lose a share of their flow to its
    fins."""
    if case.intake_cfm is None:
        return None
    shipped = shipped_intake_cfm(case)
    replaced = radiator_fans_cfm(cooler, gpu) if shipped is None else shipped
    return int(round(case.intake_cfm * 10)) - 10 * replaced + 10 * radiator_cfm(cooler, gpu)


def intake_warming_k(b: Build) -> float | None:
    """Kelvin the intake radiator adds to the air the GPUs breathe: its heat over the air pushed through it."""
    cooler, gpu = b.get("cooler"), b.get("gpu")
    rad = radiator_cfm(cooler, gpu)
    if not rad:
        return None
    if cooler is not None and cooler.type == "aio":
        heat = b.parts["cpu"].power_w if b.has("cpu") else None
    else:
        heat = gpu_power_w(gpu, b.chips, b.power_fraction)
    return None if heat is None else heat * 1000 / (rad * W_PER_CFM_K_THOUSANDTHS)


def case_cooling(b: Build) -> tuple[int | None, float | None, str]:
    """(heat the case removes in W, its intake CFM, why it is less than as shipped) for the build as fitted."""
    case = b.parts["case"]
    if radiator_front_only(b.get("cooler"), case, b.get("gpu")) is not True or case.intake_cfm is None:
        return case_heat_capacity_w(case), case.intake_cfm, ""
    tenths = intake_with_radiator_tenths(case, b.get("cooler"), b.get("gpu"))
    where = intake_radiator_position(case)
    fans = case.shipped_intake(where)
    replaced = f"it replaces the {fans[0]}x{fans[1]} mm fans shipped there" if fans else "it replaces the fans there"
    why = (f" with the {build_radiator_mm(b.get('cooler'), b.get('gpu'))} mm radiator in the {where} intake ({replaced}; "
           f"its fins cost its fans about {RADIATOR_LOSS_TENTHS * 10} % of their flow, an estimate)")
    return max(0, tenths) * W_PER_CFM_TENTHS // 100, max(0, tenths) / 10, why


class BoardCpuPower(Rule):
    name = "board_cpu_power"
    categories = ("cpu", "motherboard")
    summary = "the board's power delivery is built for the CPU's sustained package power"

    def check(self, b: Build):
        cpu, mb = b.parts["cpu"], b.parts["motherboard"]
        if mb.max_cpu_power_w is None:
            return [self.unverified("board CPU power class", [mb.id])]
        if cpu.power_w <= mb.max_cpu_power_w:
            return []
        return [self.finding(f"{cpu.name} draws up to {cpu.power_w} W; the {mb.chipset} board is built for about "
                             f"{mb.max_cpu_power_w} W: its power stage runs hot or throttles the CPU under 24/7 load",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        m.model.Add(m.attr("cpu", lambda p: p.power_w) <= m.attr("motherboard", lambda p: p.max_cpu_power_w))


def case_heat_w(b: Build) -> tuple[int, int, int]:
    """Sustained heat of the build: (drawn, blown out of the back by the cards, left in the case for its fans)."""
    drawn = power_terms(b).sustained_w
    out = b.gpu_count * gpu_heat_exhausted_w(b.parts["gpu"], b.chips, b.power_fraction)
    return drawn, out, drawn - out


class CaseAirflow(Rule):
    name = "case_airflow"
    severity = Severity.WARNING
    categories = ("case", "gpu", "cpu")
    summary = ("the case's intake airflow removes the sustained heat left in the case (5.7 W per CFM at a 10 K rise; "
               "blower cards exhaust most of theirs out of the back)")

    def check(self, b: Build):
        case = b.parts["case"]
        cap, cfm, why = case_cooling(b)
        if cap is None:
            return [self.unverified("case intake airflow", [case.id])]
        drawn, out, heat = case_heat_w(b)
        if heat <= cap:
            return []
        blown = f" ({drawn} W drawn, {out} W blown out by the cards)" if out else ""
        return [self.finding(f"about {heat} W of sustained heat in the case{blown}; the case's ~{cfm:g} CFM "
                             f"of intake{why} removes about {cap} W at a 10 K air temperature rise: expect hot GPUs and "
                             f"throttling", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        out = m.gpu_count * m.attr("gpu", lambda g: gpu_heat_exhausted_w(g, m.chips, m.power_fraction))
        heat = m.power()["sustained_w"] - out
        m.model.Add(heat <= m.attr("case", case_heat_capacity_w)).OnlyEnforceIf(m.front_radiator().Not())
        # an intake radiator: the fans shipped at its position (or, not recorded, as many as its own) give way to its
        # fans, which lose a share to its fins; 100 x heat <= 57 x intake tenths, as check() computes
        post = m.attr("cooler", lambda c: radiator_cfm(c, None)) + m.attr("gpu", lambda g: radiator_cfm(None, g), unknown=0)
        pre = (m.attr("cooler", lambda c: radiator_fans_cfm(c, None))
               + m.attr("gpu", lambda g: radiator_fans_cfm(None, g), unknown=0))
        base = m.attr("case", lambda c: None if c.intake_cfm is None else int(round(c.intake_cfm * 10)))
        known = m.has("case", lambda c: shipped_intake_cfm(c) is not None, unknown=False)
        shipped = m.attr("case", lambda c: shipped_intake_cfm(c) or 0, unknown=0)
        front = m.front_radiator()
        m.model.Add(100 * heat <= W_PER_CFM_TENTHS * (base - 10 * shipped + 10 * post)).OnlyEnforceIf(
            [front, m.model_bool(known)])
        m.model.Add(100 * heat <= W_PER_CFM_TENTHS * (base - 10 * pre + 10 * post)).OnlyEnforceIf(
            [front, m.model_bool(1 - known)])


class RadiatorInIntake(Rule):
    """A radiator whose only mount is an intake (front or bottom) warms the air the GPUs breathe by the heat it
    carries (a CPU AIO's 150-250 W, a hybrid card's own) and restricts that intake; where the case has no top or rear
    mount for it, a builder fits an air tower instead (issue 34 item 2: the Torrent's front, the only mount a 360 mm
    AIO has)."""

    name = "radiator_in_intake"
    severity = Severity.WARNING
    categories = ("cooler", "case")
    summary = "no liquid radiator in the intake the GPUs breathe from (an air tower where top/rear cannot take it)"

    def applies(self, b: Build) -> bool:
        return b.has("case") and (b.has("cooler") or b.has("gpu"))

    def check(self, b: Build):
        cooler, case, gpu = b.get("cooler"), b.parts["case"], b.get("gpu")
        if radiator_front_only(cooler, case, gpu) is not True:
            return []
        whose = "CPU" if cooler is not None and cooler.type == "aio" else "graphics card's"
        warm, cfm = intake_warming_k(b), radiator_cfm(cooler, gpu)
        by = f" about {warm:.0f} K" if warm is not None else ""
        through = f" through its ~{cfm} CFM" if cfm else ""
        return [self.finding(f"the {build_radiator_mm(cooler, gpu)} mm {whose} radiator fits only the "
                             f"{intake_radiator_position(case)} intake of the {case.name}: it warms the air the GPUs "
                             f"breathe by{by} (its heat{through}) and restricts that intake; an air tower (or a case "
                             "with a top mount) keeps their intake cool", b.ids("cooler", "gpu", "case"))]

    def encode(self, m: Encoder):
        m.model.Add(m.front_radiator() == 0)


RULES = [BoardCpuPower(), CaseAirflow(), RadiatorInIntake()]
