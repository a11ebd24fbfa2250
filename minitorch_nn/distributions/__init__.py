"""``minitorch_nn.distributions``: the probability distributions small models sample from
(mirrors ``torch.distributions``).

``distribution.py`` is the interface (shapes, ``sample``/``rsample``/``log_prob``/``entropy``,
argument validation); ``constraints.py`` says which values are allowed; one file per distribution:
``Normal``, ``Uniform``, ``Bernoulli``, ``Categorical``, ``OneHotCategorical``. Each draws from the
generator with the same calls as PyTorch, so ``manual_seed(s)`` gives PyTorch's samples.

Not here (yet): the other distributions, transforms, ``kl_divergence`` and ``ExponentialFamily``.
"""

from minitorch_nn.distributions import constraints
from minitorch_nn.distributions.bernoulli import Bernoulli
from minitorch_nn.distributions.categorical import Categorical
from minitorch_nn.distributions.distribution import Distribution
from minitorch_nn.distributions.normal import Normal
from minitorch_nn.distributions.one_hot_categorical import OneHotCategorical
from minitorch_nn.distributions.uniform import Uniform

__all__ = ["Bernoulli", "Categorical", "Distribution", "Normal", "OneHotCategorical", "Uniform", "constraints"]
