; softmax_layernorm_bf16.s — a row softmax and a layer norm on the `small` configuration, all on
; the device with VECTOR's math= and REDUCE (docs/ISA.md).
;
;   P = softmax(X) along each row          X: 4x16, P: 4x16
;   N = (X - mean) * rsqrt(var + 1/64)     mean and var of each row of X (no scale or shift)
;
; X[i][k] = (k - 2i) / 4 (exact in bf16). Softmax subtracts the row maximum first, inside the
; same instruction as exp (the difference is fp32, not rounded to bf16 before exp).
;
; Memory map: 0x000000 the instructions; 0x010000 X and the epsilon row; 0x020000 P; 0x020200 N.

.config small
.text   at=0x0

.equ    ROW_BYTES, 32                      ; one row of 16 bf16

.data   X, at=0x10000, dtype=bf16
.values  0.0,  0.25, 0.5,  0.75, 1.0,  1.25, 1.5,  1.75, 2.0,  2.25, 2.5,  2.75, 3.0,  3.25, 3.5,  3.75
.values -0.5, -0.25, 0.0,  0.25, 0.5,  0.75, 1.0,  1.25, 1.5,  1.75, 2.0,  2.25, 2.5,  2.75, 3.0,  3.25
.values -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5,  0.75, 1.0,  1.25, 1.5,  1.75, 2.0,  2.25, 2.5,  2.75
.values -1.5, -1.25, -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5,  0.75, 1.0,  1.25, 1.5,  1.75, 2.0,  2.25
.data   EPS, at=0x10100, dtype=bf16        ; 1/64 in element 0 (read with bcol)
.values 0.015625, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0

.output P, at=0x20000, dtype=bf16, shape=4x16
.output N, at=0x20200, dtype=bf16, shape=4x16

; ---- On-chip layout (unified-buffer rows) ------------------------------------------------------
.equ    UB_X, 0                ; 0..3   X
.equ    UB_EPS, 4              ; 4      epsilon
.equ    UB_M, 8                ; 8..11  a scalar per row (element 0): max, then 1/sum
.equ    UB_E, 12               ; 12..15 e^(x - max), then P
.equ    UB_S, 16               ; 16..19 sum of e, then its reciprocal
.equ    UB_MEAN, 20            ; 20..23 mean
.equ    UB_D, 24               ; 24..27 x - mean, then N
.equ    UB_SQ, 28              ; 28..31 (x - mean)^2
.equ    UB_VAR, 32             ; 32..35 var, then rsqrt(var + eps)

load    mem=ub, dram=X,   stride=ROW_BYTES, row=UB_X,   rows=4, elems=16, signal=vector
load    mem=ub, dram=EPS, stride=ROW_BYTES, row=UB_EPS, rows=1, elems=16, signal=vector

; Softmax: max, exp(x - max), sum, 1/sum, scale. One instruction waits for both LOADs.
reduce  op=max, over=elems, src=UB_X, dst=UB_M, rows=4, elems=16, wait=load
vector  op=sub, bcol, math=exp, a=UB_X, b=UB_M, dst=UB_E, rows=4
reduce  op=sum, over=elems, src=UB_E, dst=UB_S, rows=4, elems=16
vector  op=pass, math=recip, a=UB_S, dst=UB_S, rows=4
vector  op=mul, bcol, a=UB_E, b=UB_S, dst=UB_E, rows=4

; Layer norm: mean, x - mean, mean of squares, rsqrt(var + eps), scale.
reduce  op=sum, over=elems, src=UB_X, dst=UB_MEAN, rows=4, elems=16, scale=0.0625
vector  op=sub, bcol, a=UB_X, b=UB_MEAN, dst=UB_D, rows=4
vector  op=mul, a=UB_D, b=UB_D, dst=UB_SQ, rows=4
reduce  op=sum, over=elems, src=UB_SQ, dst=UB_VAR, rows=4, elems=16, scale=0.0625
vector  op=add, bcast, math=rsqrt, a=UB_VAR, b=UB_EPS, dst=UB_VAR, rows=4, wait=load
vector  op=mul, bcol, a=UB_D, b=UB_VAR, dst=UB_D, rows=4, signal=store

store   mem=ub, dram=P, stride=ROW_BYTES, row=UB_E, rows=4, elems=16, wait=vector
store   mem=ub, dram=N, stride=ROW_BYTES, row=UB_D, rows=4, elems=16
halt
