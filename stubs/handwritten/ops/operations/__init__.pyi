from mindspore.ops import Add as Add
from mindspore.ops import Depend as Depend
from mindspore.ops import MatMul as MatMul
from mindspore.ops import Mul as Mul
from mindspore.ops import ReduceMean as ReduceMean
from mindspore.ops import ReduceSum as ReduceSum
from mindspore.ops import ReLU as ReLU
