"""Multi-GPU platform rules: CPU-wired x8+ slots, slot spacing against card width, and the case's slot count."""

from __future__ import annotations

import math

from planner.catalog.models import Severity
from planner.compat.rules.base import PERMISSIVE, Build, Encoder, Rule

MIN_LANES = 8  # x8 per card from the CPU (x8/x8); a chipset x4 slot is not a GPU slot (docs/rules.md)


def card_width(gpu) -> int | None:
    """Slot positions a card covers: its width rounded up (a 2.5-slot card blocks the third slot)."""
    return None if gpu.slots is None else math.ceil(gpu.slots - 1e-9)


HOT_FLOW_THROUGH_W = 400  # above this board power a flow-through card's exhaust needs two free slots (our estimate)


def free_slots_needed(gpu) -> int:
    """Free slots between stacked cards: none for blower and passive cards (they exhaust out of the back), one for an
    open-air cooler (it draws air from the card below), two for a flow-through card above 400 W, whose hot exhaust
    leaves through its back edge straight into the intake of the card above (issue 26: two 575 W Founders Editions
    one slot apart recirculate their heat)."""
    if gpu.cooling in ("blower", "passive"):
        return 0
    if gpu.cooling == "flow-through" and (gpu.tgp_w or 0) > HOT_FLOW_THROUGH_W:
        return 2
    return 1


def card_pitch_needed(gpu) -> int | None:
    """Slot pitch a stack of these cards needs: the width plus the free slots its cooler design needs."""
    w = card_width(gpu)
    if w is None:
        return None
    return w + free_slots_needed(gpu)


class SeveralGpus(Rule):
    """A rule about stacking cards: it applies only when the build has more than one GPU."""

    def applies(self, b: Build) -> bool:
        return super().applies(b) and b.gpu_count > 1


class MultiGpuSlots(SeveralGpus):
    name = "pcie_x16_slots"
    categories = ("gpu", "motherboard")
    strict_unknown = True
    summary = f"several GPUs need as many x16-size slots wired to the CPU at x{MIN_LANES} or more, spaced for the cards"

    def check(self, b: Build):
        gpu, mb, n = b.parts["gpu"], b.parts["motherboard"], b.gpu_count
        out = []
        if mb.gpu_slots_x8 is None:
            out.append(self.unverified("board CPU-wired x8 slot count", [mb.id]))
        elif mb.gpu_slots_x8 < n:
            out.append(self.finding(f"{n} GPUs but the board wires {mb.gpu_slots_x8} x16-size slot(s) to the CPU at "
                                    f"x{MIN_LANES} or more (other x16-size slots run at chipset x4 or share lanes)",
                                    b.ids(*self.categories)))
        need = card_pitch_needed(gpu)
        if mb.gpu_slot_pitch is None:
            out.append(self.unverified("board GPU slot spacing", [mb.id]))
        if need is None:
            out.append(self.unverified("GPU slot width", [gpu.id]))
        elif mb.gpu_slot_pitch is not None and mb.gpu_slot_pitch < need:
            free = free_slots_needed(gpu)
            why = "" if not free else (f" ({gpu.slots:g} for the card, {free} free for its {gpu.cooling} cooler to "
                                       "breathe)")
            out.append(self.finding(f"the board's GPU slots are {mb.gpu_slot_pitch} positions apart; stacked "
                                    f"{gpu.slots:g}-slot cards need slots {need} positions apart{why}",
                                    b.ids(*self.categories)))
        return out

    def encode(self, m: Encoder):
        n = m.gpu_count
        if n <= 1:
            return
        m.model.Add(m.strict("motherboard", lambda p: p.gpu_slots_x8, fail=0) >= n)
        # unknown on an unpinned part must fail whatever the other side holds; on a pinned part, pass
        pitch = m.strict("motherboard", lambda p: p.gpu_slot_pitch, fail=-1, passing=PERMISSIVE)
        m.model.Add(pitch >= m.strict("gpu", card_pitch_needed, fail=10 * PERMISSIVE, passing=0))


def case_slots_needed(first: int, pitch: int, width: int, n: int) -> int:
    """Expansion-slot brackets a stack covers: from the top bracket to the last card's last slot."""
    return first - 1 + (n - 1) * pitch + width


class MultiGpuCaseSlots(SeveralGpus):
    name = "multi_gpu_case_slots"
    categories = ("gpu", "motherboard", "case")
    strict_unknown = True
    summary = "the case has expansion slots down to the last card's last slot"

    def check(self, b: Build):
        gpu, mb, case, n = b.parts["gpu"], b.parts["motherboard"], b.parts["case"], b.gpu_count
        missing = [p.id for p, v in ((mb, mb.first_gpu_slot), (mb, mb.gpu_slot_pitch), (gpu, gpu.slots),
                                     (case, case.expansion_slots)) if v is None]
        if missing:
            return [self.unverified("GPU slot position, spacing, card width or case slot count",
                                    list(dict.fromkeys(missing)))]
        need = case_slots_needed(mb.first_gpu_slot, mb.gpu_slot_pitch, card_width(gpu), n)
        if need <= case.expansion_slots:
            return []
        return [self.finding(f"{n} cards from slot {mb.first_gpu_slot}, {mb.gpu_slot_pitch} apart, "
                             f"{card_width(gpu)} wide reach slot {need}; the case has {case.expansion_slots}",
                             b.ids(*self.categories))]

    def encode(self, m: Encoder):
        n = m.gpu_count
        if n <= 1:
            return
        big = 10 * PERMISSIVE  # an unpinned unknown outweighs a pinned one (which only has to pass)

        def offset(p):
            if p.first_gpu_slot is None or p.gpu_slot_pitch is None:
                return None
            return p.first_gpu_slot - 1 + (n - 1) * p.gpu_slot_pitch
        left = (m.strict("motherboard", offset, fail=big, passing=-PERMISSIVE)
                + m.strict("gpu", card_width, fail=big, passing=-PERMISSIVE))
        m.model.Add(left <= m.strict("case", lambda c: c.expansion_slots, fail=-big, passing=PERMISSIVE))


class MultiGpuCpuLanes(SeveralGpus):
    name = "multi_gpu_cpu_lanes"
    categories = ("gpu", "cpu")
    strict_unknown = True
    summary = f"several GPUs need x{MIN_LANES} from the CPU each: an APU such as the Ryzen 8700G has x8 for graphics in all"

    def check(self, b: Build):
        cpu, n = b.parts["cpu"], b.gpu_count
        if cpu.gpu_pcie_lanes is None:
            return [self.unverified("CPU lanes for graphics", [cpu.id])]
        if cpu.gpu_pcie_lanes < MIN_LANES * n:
            return [self.finding(f"{n} GPUs need x{MIN_LANES} each ({MIN_LANES * n} lanes) from the CPU; "
                                 f"{cpu.name} gives graphics x{cpu.gpu_pcie_lanes} in all", b.ids(*self.categories))]
        return []

    def encode(self, m: Encoder):
        n = m.gpu_count
        if n <= 1:
            return
        m.model.Add(m.strict("cpu", lambda p: p.gpu_pcie_lanes, fail=0) >= MIN_LANES * n)


class StackedExhaust(SeveralGpus):
    name = "stacked_exhaust"
    severity = Severity.WARNING
    categories = ("gpu", "cooler")
    summary = ("stacked flow-through cards blow their exhaust up into the CPU cooler: with several of them, cool the "
               "CPU with a liquid cooler (AIO) or choose open-air or blower cards")

    def check(self, b: Build):
        gpu, cooler = b.parts["gpu"], b.parts["cooler"]
        if gpu.cooling != "flow-through" or cooler.type != "air":
            return []
        return [self.finding(f"{b.gpu_count} flow-through cards ({gpu.name}) push about "
                             f"{b.gpu_count * (gpu.tgp_w or 0)} W of exhaust upward, through the card above and into "
                             f"the {cooler.name}'s intake: the CPU and the top card breathe pre-heated air; use an AIO "
                             "for the CPU, or open-air or blower cards", b.ids(*self.categories))]

    def encode(self, m: Encoder):
        if m.gpu_count <= 1:
            return
        m.model.Add(m.has("gpu", lambda g: g.cooling == "flow-through") + m.has("cooler", lambda c: c.type == "air")
                    <= 1)


RULES = [MultiGpuSlots(), MultiGpuCpuLanes(), MultiGpuCaseSlots(), StackedExhaust()]
