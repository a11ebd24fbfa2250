"""``minitorch_nn.optim``: optimizers and learning-rate schedules (mirrors ``torch.optim``).

Read ``optimizer.py`` first (param groups, state, checkpoints), then one algorithm: ``sgd.py``,
``adam.py`` (``adamw.py`` is Adam with decoupled weight decay), ``rmsprop.py``, ``adagrad.py``,
``adadelta.py``, ``adamax.py``, ``nadam.py``, ``radam.py``, ``asgd.py``, ``rprop.py``, ``lbfgs.py``
(a quasi-Newton method with a line search), and ``lr_scheduler.py``.
"""

from minitorch_nn.optim import lr_scheduler
from minitorch_nn.optim.adadelta import Adadelta
from minitorch_nn.optim.adagrad import Adagrad
from minitorch_nn.optim.adam import Adam
from minitorch_nn.optim.adamax import Adamax
from minitorch_nn.optim.adamw import AdamW
from minitorch_nn.optim.asgd import ASGD
from minitorch_nn.optim.lbfgs import LBFGS
from minitorch_nn.optim.nadam import NAdam
from minitorch_nn.optim.optimizer import Optimizer
from minitorch_nn.optim.radam import RAdam
from minitorch_nn.optim.rmsprop import RMSprop
from minitorch_nn.optim.rprop import Rprop
from minitorch_nn.optim.sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "ASGD", "NAdam",
           "RAdam", "Rprop", "LBFGS", "lr_scheduler"]
