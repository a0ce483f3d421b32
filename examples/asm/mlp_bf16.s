; mlp_bf16.s — a two-layer perceptron on the `small` configuration (16x16 bf16 array).
;
;   H = relu(X · W1 + b1)        X: 8x16, W1: 16x16, b1: 16
;   Y = H · W2 + b2              W2: 16x16, b2: 16, Y: 8x16
;
; The numbers are chosen so that the result can be checked by hand:
;   X[i][k] = k - 2i             (row 0 is 0..15, each next row is 2 lower)
;   W1 = identity, b1 = 1        so H[i][k] = max(0, k - 2i + 1)
;   W2 = 0.5 on the diagonal for columns 0..14, and column 15 all ones; b2 = -1
;                                so Y[i][j] = H[i][j] / 2 - 1 for j < 15
;                                and Y[i][15] = (H[i][0] + ... + H[i][15]) - 1, a row checksum
;                                (row 0: H = 1..16, Y = -0.5, 0, 0.5, ..., 6.5, 135).
; Every value is a small integer or half-integer, exact in bf16, and every fp32 sum is exact.
;
; Memory map (device byte addresses):
;   0x000000  the instructions (.text)
;   0x010000  X, W1, W2, b1, b2 (all initialised by the program bundle, so it runs as is)
;   0x020000  Y, the output
;
; Units run concurrently and in order; tokens order them: each LOAD signals the unit that uses
; its data, MATMUL signals VECTOR, ACTIVATE signals MXU (the second MATMUL overwrites the
; accumulator rows the first ACTIVATE reads) and STORE. LOAD_WEIGHTS needs no token: the weight
; FIFO is its own flow control between WEIGHT and MXU.

.config small
.text   at=0x0

; ---- Data -------------------------------------------------------------------------------------
; Unified-buffer rows hold 16 bf16 (32 bytes); accumulator rows hold 16 fp32 (64 bytes).
.equ    ROW_BYTES, 32          ; one row of 16 bf16 in device memory
.equ    ACC_ROW_BYTES, 64      ; one row of 16 fp32

.data   X, at=0x10000, dtype=bf16          ; input activations, 8 rows of 16
.values   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13,  14,  15
.values  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11,  12,  13
.values  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9,  10,  11
.values  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7,   8,   9
.values  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5,   6,   7
.values -10,  -9,  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3,   4,   5
.values -12, -11, -10,  -9,  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1,   2,   3
.values -14, -13, -12, -11, -10,  -9,  -8,  -7,  -6,  -5,  -4,  -3,  -2,  -1,   0,   1

.data   W1, at=0x10100, dtype=bf16         ; W1[k][j]: input k -> hidden j (identity)
.values 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1

.data   W2, at=0x10300, dtype=bf16         ; W2[k][j]: hidden k -> output j
.values .5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, .5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, .5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, .5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, .5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, .5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, .5, 0, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, .5, 0, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, .5, 0, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, .5, 0, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, .5, 0, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, .5, 0, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, .5, 0, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, .5, 0, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, .5, 1
.values 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1

; Biases are added in the accumulators (fp32), so they are stored as fp32.
.data   B1, at=0x10500, dtype=fp32
.values 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0
.data   B2, at=0x10540, dtype=fp32
.values -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0

.output Y, at=0x20000, dtype=bf16, shape=8x16

; ---- On-chip layout ---------------------------------------------------------------------------
.equ    UB_X, 0                ; unified-buffer rows 0..7: X
.equ    UB_H, 8                ; rows 8..15: H
.equ    UB_Y, 16               ; rows 16..23: Y
.equ    ACC_OUT, 0             ; accumulator rows 0..7: X·W1, then H·W2
.equ    ACC_B1, 16             ; accumulator row 16: b1
.equ    ACC_B2, 17             ; accumulator row 17: b2

; ---- Program ----------------------------------------------------------------------------------
; Bring in the operands. The three LOADs run in order on the LOAD unit; the two weight tiles
; queue in the weight FIFO meanwhile.
load         mem=ub,  dram=X,  stride=ROW_BYTES,     row=UB_X,   rows=8, elems=16, signal=mxu
load         mem=acc, dram=B1, stride=ACC_ROW_BYTES, row=ACC_B1, rows=1, elems=16, signal=vector
load         mem=acc, dram=B2, stride=ACC_ROW_BYTES, row=ACC_B2, rows=1, elems=16, signal=vector
load_weights dram=W1, stride=ROW_BYTES, rows=16, cols=16
load_weights dram=W2, stride=ROW_BYTES, rows=16, cols=16

; Layer 1: ACC = X · W1 (pop makes W1 the stationary tile), then H = relu(ACC + b1).
; No scale= is given: a scale field of 0 (what an omitted field assembles to) means 1.0.
matmul       ub=UB_X, acc=ACC_OUT, rows=8, k=16, pop, wait=load, signal=vector
activate     acc=ACC_OUT, ub=UB_H, rows=8, bias, bias_row=ACC_B1, func=relu, wait=load|mxu, signal=mxu

; Layer 2: ACC = H · W2 (waits for ACTIVATE, which both wrote H and read the old ACC rows),
; then Y = ACC + b2.
matmul       ub=UB_H, acc=ACC_OUT, rows=8, k=16, pop, wait=vector, signal=vector
activate     acc=ACC_OUT, ub=UB_Y, rows=8, bias, bias_row=ACC_B2, wait=load|mxu, signal=store

; Write Y back and finish.
store        mem=ub, dram=Y, stride=ROW_BYTES, row=UB_Y, rows=8, elems=16, wait=vector
halt
