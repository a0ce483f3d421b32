; conv_pool_tiny.s — a 1x1 convolution, max and average pooling and elementwise vector ops on
; the `tiny` configuration (4x4 int8 array, unified-buffer rows of 4 int8).
;
; Images are stored one pixel per unified-buffer row, channels along the row, so a 4x4 image
; with 4 channels is 16 rows: pixel (y, x) is row y*4 + x. A 1x1 convolution is then a plain
; MATMUL of the pixel rows by a 4x4 (in-channel x out-channel) weight tile.
;
; The numbers (p = y*4 + x is the pixel number):
;   IMG[p]  = [p, -p, x, 1]
;   W       = conv weights T[in][out]:  out0 = in0, out1 = in1, out2 = 2*in2 + in3,
;             out3 = in0 + in1 + 5*in3
;   F[p]    = relu(IMG[p] · W) = [p, 0, 2x + 1, 5]              (activate; no scale: 0 means 1)
;   MX      = 2x2 max pool, stride 2   -> 2x2 pixels
;             MX(0,0) = [5, 0, 3, 5]   MX(0,1) = [7, 0, 7, 5]
;             MX(1,0) = [13, 0, 3, 5]  MX(1,1) = [15, 0, 7, 5]
;   AV      = 2x2 average pool: sum, then (sum*1 + 2) >> 2 (rounds halves up)
;             AV(0,0) = [3, 0, 2, 5]   AV(0,1) = [5, 0, 6, 5]
;             AV(1,0) = [11, 0, 2, 5]  AV(1,1) = [13, 0, 6, 5]
;   S       = MX + AV                  (vector add, saturating to int8)
;             S(0,0) = [8, 0, 5, 10]   S(0,1) = [12, 0, 13, 10]
;             S(1,0) = [24, 0, 5, 10]  S(1,1) = [28, 0, 13, 10]
;   OUT     = clamp((S * K + 1) >> 1, -8, 40) with K = [3, 7, 5, -2] broadcast to every row
;             OUT(0,0) = [12, 0, 13, -8]   OUT(0,1) = [18, 0, 33, -8]
;             OUT(1,0) = [36, 0, 13, -8]   OUT(1,1) = [40, 0, 33, -8]
;             (e.g. 28*3 = 84, (84 + 1) >> 1 = 42, clamped to 40; 10*-2 = -20, -19 >> 1 = -10 -> -8)

.config tiny
.text   at=0x400               ; the instructions need not start at 0: CMD_PC = 0x400

.data   IMG, at=0x1000, dtype=int8             ; 16 pixels x 4 channels
.values  0,   0, 0, 1,    1,  -1, 1, 1,    2,  -2, 2, 1,    3,  -3, 3, 1     ; y = 0
.values  4,  -4, 0, 1,    5,  -5, 1, 1,    6,  -6, 2, 1,    7,  -7, 3, 1     ; y = 1
.values  8,  -8, 0, 1,    9,  -9, 1, 1,   10, -10, 2, 1,   11, -11, 3, 1     ; y = 2
.values 12, -12, 0, 1,   13, -13, 1, 1,   14, -14, 2, 1,   15, -15, 3, 1     ; y = 3

.data   W, at=0x1040, dtype=int8               ; W[in][out]
.values 1, 0, 0, 1
.values 0, 1, 0, 1
.values 0, 0, 2, 0
.values 0, 0, 1, 5

.data   K, at=0x1050, dtype=int8               ; per-channel multipliers
.values 3, 7, 5, -2

.output OUT, at=0x2000, dtype=int8, shape=2x2x4

; Unified-buffer rows.
.equ    UB_IMG, 0              ; 0..15   the image
.equ    UB_F, 16               ; 16..31  after the convolution
.equ    UB_MX, 32              ; 32..35  max pool
.equ    UB_AV, 36              ; 36..39  average pool
.equ    UB_OUT, 40             ; 40..43  the result
.equ    UB_K, 44               ; 44      K

load         mem=ub, dram=IMG, stride=4, row=UB_IMG, rows=16, elems=4, signal=mxu
load         mem=ub, dram=K,   stride=4, row=UB_K,   rows=1,  elems=4, signal=vector
load_weights dram=W, stride=4, rows=4, cols=4

; The 1x1 convolution: all 16 pixels through the array, then relu on the way back to the UB.
matmul       ub=UB_IMG, acc=0, rows=16, k=4, pop, wait=load, signal=vector
activate     acc=0, ub=UB_F, rows=16, func=relu, wait=mxu

; The VECTOR unit runs its instructions in order, so no tokens are needed between them.
pool         op=max, src=UB_F, dst=UB_MX, in_w=4, out_h=2, out_w=2, win_h=2, win_w=2, stride_h=2, stride_w=2
pool         op=sum, src=UB_F, dst=UB_AV, in_w=4, out_h=2, out_w=2, win_h=2, win_w=2, stride_h=2, stride_w=2, scale=1, shift=2
vector       op=add, a=UB_MX, b=UB_AV, dst=UB_OUT, rows=4
vector       op=mul, a=UB_OUT, b=UB_K, dst=UB_OUT, rows=4, bcast, func=clamp, lo=-8, hi=40, shift=1, wait=load, signal=store

store        mem=ub, dram=OUT, stride=4, row=UB_OUT, rows=4, elems=4, wait=vector
halt
