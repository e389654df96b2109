"""Rules for months of 24/7 load: board power delivery against the CPU, case airflow against the heat."""

from __future__ import annotations

from planner.catalog.models import Severity
from planner.compat.rules.base import (Build, Encoder, Rule, build_radiator_mm, gpu_power_w, power_terms,
                                       radiator_front_only)

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
        cap = case_heat_capacity_w(case)
        if cap is None:
            return [self.unverified("case intake airflow", [case.id])]
        drawn, out, heat = case_heat_w(b)
        if heat <= cap:
            return []
        blown = f" ({drawn} W drawn, {out} W blown out by the cards)" if out else ""
        return [self.finding(f"about {heat} W of sustained heat in the case{blown}; the case's ~{case.intake_cfm:g} CFM "
                             f"of intake removes about {cap} W at a 10 K air temperature rise: expect hot GPUs and "
                             f"throttling", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        out = m.gpu_count * m.attr("gpu", lambda g: gpu_heat_exhausted_w(g, m.chips, m.power_fraction))
        m.model.Add(m.power()["sustained_w"] - out <= m.attr("case", case_heat_capacity_w))


class RadiatorInIntake(Rule):
    """A radiator whose only mount is the front intake warms the air the GPUs breathe by the heat it carries (a CPU
    AIO's 150-250 W, a hybrid card's own) and restricts that intake; where the case has no top or rear mount for it,
    a builder fits an air tower instead (issue 34 item 2: the Torrent's front, the only mount a 360 mm AIO has)."""

    name = "radiator_in_intake"
    severity = Severity.WARNING
    categories = ("cooler", "case")
    summary = "no liquid radiator in the front intake the GPUs breathe from (an air tower where top/rear cannot take it)"

    def applies(self, b: Build) -> bool:
        return b.has("case") and (b.has("cooler") or b.has("gpu"))

    def check(self, b: Build):
        cooler, case, gpu = b.get("cooler"), b.parts["case"], b.get("gpu")
        if radiator_front_only(cooler, case, gpu) is not True:
            return []
        whose = "CPU" if cooler is not None and cooler.type == "aio" else "graphics card's"
        return [self.finding(f"the {build_radiator_mm(cooler, gpu)} mm {whose} radiator fits only the front intake of "
                             f"the {case.name}: the GPUs then breathe air it has warmed through a restricted intake; an "
                             "air tower (or a case with a top mount) keeps their intake cool",
                             b.ids("cooler", "gpu", "case"))]

    def encode(self, m: Encoder):
        m.model.Add(m.front_radiator() == 0)


RULES = [BoardCpuPower(), CaseAirflow(), RadiatorInIntake()]
