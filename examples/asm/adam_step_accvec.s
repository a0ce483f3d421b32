; adam_step_accvec.s — one Adam update of a 2x16 parameter block on the `small` configuration,
; all in fp32 on the accumulators with ACCVEC (docs/ISA.md), bit-identical to the same float32
; operations on the host (docs/NUMERICS.md, "ACCVEC"):
;
;   m' = b1*m + (1-b1)*g          v' = b2*v + (1-b2)*g*g
;   w' = w - lr * (m' / (1-b1^t)) / (sqrt(v' / (1-b2^t)) + eps)      (step t = 1)
;
; W[i][j] = (j-8)/8 + i, M[i][j] = (j%5 - 2)/64, V[i][j] = (j%3 + 1)/1024,
; G[i][j] = (j - 3i - 4)/16. The immediates (scalar, imm=) carry the hyperparameters, so no
; constant rows are needed. Every ACCVEC runs on the vector unit in program order; one token
; from LOAD before the first and one to STORE after the last.
;
; Memory map: 0x000000 the instructions; 0x010000 the state and the gradient (8 fp32 rows);
; 0x020000 W', M', V'.

.config small
.text   at=0x0

.equ    ROW_BYTES, 64                      ; one accumulator row: 16 fp32

.data   STATE, at=0x10000, dtype=fp32      ; rows: W (2), M (2), V (2), G (2)
.values -1.0, -0.875, -0.75, -0.625, -0.5, -0.375, -0.25, -0.125, 0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875
.values 0.0, 0.125, 0.25, 0.375, 0.5, 0.625, 0.75, 0.875, 1.0, 1.125, 1.25, 1.375, 1.5, 1.625, 1.75, 1.875
.values -0.03125, -0.015625, 0.0, 0.015625, 0.03125, -0.03125, -0.015625, 0.0, 0.015625, 0.03125, -0.03125, -0.015625, 0.0, 0.015625, 0.03125, -0.03125
.values -0.03125, -0.015625, 0.0, 0.015625, 0.03125, -0.03125, -0.015625, 0.0, 0.015625, 0.03125, -0.03125, -0.015625, 0.0, 0.015625, 0.03125, -0.03125
.values 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625
.values 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625, 0.001953125, 0.0029296875, 0.0009765625
.values -0.25, -0.1875, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375, 0.5, 0.5625, 0.625, 0.6875
.values -0.4375, -0.375, -0.3125, -0.25, -0.1875, -0.125, -0.0625, 0.0, 0.0625, 0.125, 0.1875, 0.25, 0.3125, 0.375, 0.4375, 0.5

.output W, at=0x20000, dtype=fp32, shape=2x16
.output M, at=0x20080, dtype=fp32, shape=2x16
.output V, at=0x20100, dtype=fp32, shape=2x16

; ---- Accumulator rows ---------------------------------------------------------------------------
.equ    ACC_W, 0
.equ    ACC_M, 2
.equ    ACC_V, 4
.equ    ACC_G, 6
.equ    ACC_T, 8                   ; temporaries
.equ    ACC_U, 10

.equ    B1, 0.9
.equ    ONE_MINUS_B1, 0.1
.equ    B2, 0.999
.equ    ONE_MINUS_B2, 0.001
.equ    LR, 0.001
.equ    EPS, 1e-8

load    mem=acc, dram=STATE, stride=ROW_BYTES, row=ACC_W, rows=8, elems=16, signal=vector
accvec  op=mul, a=ACC_M, dst=ACC_M, rows=2, scalar, imm=B1, wait=load          ; m = b1*m
accvec  op=mul, a=ACC_G, dst=ACC_T, rows=2, scalar, imm=ONE_MINUS_B1           ; t = (1-b1)*g
accvec  op=add, a=ACC_M, b=ACC_T, dst=ACC_M, rows=2                            ; m' = m + t
accvec  op=mul, a=ACC_V, dst=ACC_V, rows=2, scalar, imm=B2                     ; v = b2*v
accvec  op=mul, a=ACC_G, b=ACC_G, dst=ACC_T, rows=2                            ; t = g*g
accvec  op=mul, a=ACC_T, dst=ACC_T, rows=2, scalar, imm=ONE_MINUS_B2           ; t = (1-b2)*t
accvec  op=add, a=ACC_V, b=ACC_T, dst=ACC_V, rows=2                            ; v' = v + t
accvec  op=div, a=ACC_V, dst=ACC_T, rows=2, scalar, imm=ONE_MINUS_B2           ; t = v' / (1-b2)
accvec  op=sqrt, a=ACC_T, dst=ACC_T, rows=2                                    ; t = sqrt(t)
accvec  op=add, a=ACC_T, dst=ACC_T, rows=2, scalar, imm=EPS                    ; t = t + eps
accvec  op=div, a=ACC_M, dst=ACC_U, rows=2, scalar, imm=ONE_MINUS_B1           ; u = m' / (1-b1)
accvec  op=div, a=ACC_U, b=ACC_T, dst=ACC_U, rows=2                            ; u = u / t
accvec  op=mul, a=ACC_U, dst=ACC_U, rows=2, scalar, imm=LR                     ; u = lr*u
accvec  op=sub, a=ACC_W, b=ACC_U, dst=ACC_W, rows=2, signal=store              ; w' = w - u
store   mem=acc, dram=W, stride=ROW_BYTES, row=ACC_W, rows=6, elems=16, wait=vector
halt
