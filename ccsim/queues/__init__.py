"""Queue disciplines: one file each, all on the contract of :mod:`.base`.

``ccsim.queues.names()`` lists the registered kinds; a scenario names one
(``dumbbell(queue="codel")``) or passes an object (``queue=ccsim.CoDel(limit=100)``).
A scheduler (several queues, the next packet picked at dequeue: FQ-CoDel,
FQ, DualPI2) is on the contract of :mod:`.scheduler`.
"""

from .base import (DROP, ENQUEUE, MARK, FluidQueue, LinkView, QueueDiscipline, QueueState, get,
                   names, register)
from .codel import CoDel
from .droptail import DropTail
from .dualpi2 import DualPI2
from .fq import FQ
from .fq_codel import FqCodel
from .pie import PIE
from .red import RED
from .scheduler import Packet, Scheduler, SchedulerState
from .step import StepMark

__all__ = ["QueueDiscipline", "QueueState", "FluidQueue", "LinkView", "ENQUEUE", "DROP", "MARK",
           "register", "names", "get", "DropTail", "RED", "CoDel", "PIE", "StepMark", "Scheduler",
           "SchedulerState", "Packet", "FqCodel", "FQ", "DualPI2"]
