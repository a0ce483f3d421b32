; mlp_int8.s — the two-layer perceptron of mlp_bf16.s, quantized, on `small-int8`
; (16x16 int8 array, int32 accumulators).
;
;   H = relu(requant(X · W1 + b1))      X: 8x16 int8, W1: 16x16 int8, b1: 16 int32
;   Y = requant(H · W2 + b2) + zp       W2: 16x16 int8, b2: 16 int32, Y: 8x16 int8
;
; ACTIVATE requantizes an int32 accumulator v to int8 (docs/NUMERICS.md):
;   r = (v * scale + 2^(shift-1)) >> shift     (in int64; rounds halves up)
;   r = func(r);  out = saturate_int8(r + zp)
;
; The numbers (compare mlp_bf16.s):
;   X[i][k] = k - 2i
;   W1 = 4 * identity, b1 = 2, scale=1, shift=2:
;       (4x + 2 + 2) >> 2 = x + 1, so H[i][k] = max(0, k - 2i + 1)     (row 0: 1..16)
;   W2 = identity for columns 0..14, column 15 all ones; b2 = -2; scale=3, shift=2, zp=5:
;       v = H[i][j] - 2 (j < 15) or v = (H[i][0] + ... + H[i][15]) - 2 (j = 15)
;       Y[i][j] = ((3v + 2) >> 2) + 5, saturated to -128..127
;       row 0: v = -1, 0, 1, ..., 13, 134
;              Y = 4, 5, 6, 7, 7, 8, 9, 10, 10, 11, 12, 13, 13, 14, 15, 106
;       (e.g. v = 134: 3*134 + 2 = 404, 404 >> 2 = 101, + 5 = 106)
;
; Memory map: instructions at 0, data from 0x10000, output at 0x20000.

.config small-int8
.text   at=0x0

; ---- Data -------------------------------------------------------------------------------------
.equ    ROW_BYTES, 16          ; one row of 16 int8 in device memory
.equ    ACC_ROW_BYTES, 64      ; one accumulator row of 16 int32

.data   X, at=0x10000, dtype=int8            ; 8 rows of 16
.values   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,  15
.values  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13
.values  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11
.values  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9
.values  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7
.values -10,  -9,  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5
.values -12, -11, -10,  -9,  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3
.values -14, -13, -12, -11, -10,  -9,  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1

.data   W1, at=0x10080, dtype=int8           ; W1[k][j]: input k -> hidden j
.values 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4

.data   W2, at=0x10180, dtype=int8           ; W2[k][j]: hidden k -> output j
.values 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1

; Biases live in the accumulators, so they are int32.
.data   B1, at=0x10280, dtype=int32
.values 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2
.data   B2, at=0x102c0, dtype=int32
.values -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2

.output Y, at=0x20000, dtype=int8, shape=8x16

; ---- On-chip layout ---------------------------------------------------------------------------
.equ    UB_X, 0                ; unified-buffer rows 0..7: X
.equ    UB_H, 8                ; rows 8..15: H
.equ    UB_Y, 16               ; rows 16..23: Y
.equ    ACC_OUT, 0             ; accumulator rows 0..7
.equ    ACC_B1, 16             ; accumulator row 16: b1
.equ    ACC_B2, 17             ; accumulator row 17: b2

; ---- Program ----------------------------------------------------------------------------------
load         mem=ub,  dram=X,  stride=ROW_BYTES,     row=UB_X,   rows=8, elems=16, signal=mxu
load         mem=acc, dram=B1, stride=ACC_ROW_BYTES, row=ACC_B1, rows=1, elems=16, signal=vector
load         mem=acc, dram=B2, stride=ACC_ROW_BYTES, row=ACC_B2, rows=1, elems=16, signal=vector
load_weights dram=W1, stride=ROW_BYTES, rows=16, cols=16
load_weights dram=W2, stride=ROW_BYTES, rows=16, cols=16

; Layer 1: ACC = X · W1 = 4X; H = relu(((ACC + b1) * 1 + 2) >> 2).
matmul       ub=UB_X, acc=ACC_OUT, rows=8, k=16, pop, wait=load, signal=vector
activate     acc=ACC_OUT, ub=UB_H, rows=8, bias, bias_row=ACC_B1, func=relu, scale=1, shift=2, wait=load|mxu, signal=mxu

; Layer 2: ACC = H · W2; Y = (((ACC + b2) * 3 + 2) >> 2) + 5.
matmul       ub=UB_H, acc=ACC_OUT, rows=8, k=16, pop, wait=vector, signal=vector
activate     acc=ACC_OUT, ub=UB_Y, rows=8, bias, bias_row=ACC_B2, scale=3, shift=2, zp=5, wait=load|mxu, signal=store

store        mem=ub, dram=Y, stride=ROW_BYTES, row=UB_Y, rows=8, elems=16, wait=vector
halt
