from mindspore.common import dtype as dtype
from mindspore.common.parameter import Parameter as Parameter
from mindspore.common.parameter import ParameterTuple as ParameterTuple
from mindspore.common.tensor import Tensor as Tensor
