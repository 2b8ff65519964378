class Type:
    def __eq__(self, other: object) -> bool: ...
    def __hash__(self) -> int: ...

bfloat16: Type
bool_: Type
complex64: Type
complex128: Type
double: Type
float16: Type
float32: Type
float64: Type
float_: Type
half: Type
int8: Type
int16: Type
int32: Type
int64: Type
int_: Type
single: Type
uint8: Type
uint16: Type
uint32: Type
uint64: Type
