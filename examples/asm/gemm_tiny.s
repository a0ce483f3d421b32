; gemm_tiny.s — two 6x4 · 4x4 int8 matrix products on `tiny` (4x4 int8 array), back to back:
; the second weight tile shifts into the array's shadow bank while the first one computes, the
; double buffering `systole array-view` shows (docs/TRACE.md).
;
;   Y1 = X · W1     X[i][k] = i + k - 2,  W1[k][j] = k == j ? 2 : 0          (Y1 = 2X)
;   Y2 = X · W2     W2[k][j] = 1 + k * 4 + j  (1..16)
;
.config tiny
.text   at=0x0

.data   X, at=0x1000, dtype=int8
.values -2, -1,  0,  1
.values -1,  0,  1,  2
.values  0,  1,  2,  3
.values  1,  2,  3,  4
.values  2,  3,  4,  5
.values  3,  4,  5,  6

.data   W1, at=0x1100, dtype=int8
.values 2, 0, 0, 0
.values 0, 2, 0, 0
.values 0, 0, 2, 0
.values 0, 0, 0, 2

.data   W2, at=0x1200, dtype=int8
.values  1,  2,  3,  4
.values  5,  6,  7,  8
.values  9, 10, 11, 12
.values 13, 14, 15, 16

.output Y1, at=0x2000, dtype=int32, shape=6x4
.output Y2, at=0x2100, dtype=int32, shape=6x4

load         mem=ub, dram=X, stride=4, row=0, rows=6, elems=4, signal=mxu
load_weights dram=W1, stride=4, rows=4, cols=4
load_weights dram=W2, stride=4, rows=4, cols=4
matmul       ub=0, acc=0, rows=6, k=4, pop, wait=load, signal=store
matmul       ub=0, acc=8, rows=6, k=4, pop, signal=store
store        mem=acc, dram=Y1, stride=16, row=0, rows=6, elems=4, wait=mxu
store        mem=acc, dram=Y2, stride=16, row=8, rows=6, elems=4, wait=mxu
halt
