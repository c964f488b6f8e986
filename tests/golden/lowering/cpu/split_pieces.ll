; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_split_pieces(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %buf.p2 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %buf.p2, align 8
  %buf.p3 = getelementptr inbounds ptr, ptr %buffers, i64 3
  %buf3 = load ptr, ptr %buf.p3, align 8
  %buf.p4 = getelementptr inbounds ptr, ptr %buffers, i64 4
  %buf4 = load ptr, ptr %buf.p4, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %frame = alloca [96 x i8], align 64
  %stream = icmp ne i64 %stream.flag, 0
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %i.next = add i64 %i, 4
  call void @kiln_kernel_split_pieces.p0(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check, ptr %frame)
  call void @kiln_kernel_split_pieces.p1(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check, ptr %frame)
  call void @kiln_kernel_split_pieces.p2(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check, ptr %frame)
  call void @kiln_kernel_split_pieces.p3(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check, ptr %frame)
  %t25 = getelementptr inbounds i8, ptr %frame, i64 0
  %t26 = load <4 x float>, ptr %t25, align 32
  %t27 = getelementptr inbounds i8, ptr %frame, i64 32
  %t28 = load <4 x float>, ptr %t27, align 32
  %t29 = getelementptr inbounds i8, ptr %frame, i64 64
  %t30 = load <4 x float>, ptr %t29, align 32
  %t31 = getelementptr inbounds float, ptr %buf2, i64 %i
  %t32 = getelementptr inbounds float, ptr %buf3, i64 %i
  %t33 = getelementptr inbounds float, ptr %buf4, i64 %i
  %full = icmp ule i64 %i.next, %end
  %streaming = and i1 %full, %stream
  br i1 %streaming, label %store.stream, label %store.masked
store.stream:
  store <4 x float> %t26, ptr %t31, align 16, !nontemporal !0
  store <4 x float> %t28, ptr %t32, align 16, !nontemporal !0
  store <4 x float> %t30, ptr %t33, align 16, !nontemporal !0
  br label %latch
store.masked:
  call void @llvm.masked.store.v4f32.p0(<4 x float> %t26, ptr %t31, i32 4, <4 x i1> %active)
  call void @llvm.masked.store.v4f32.p0(<4 x float> %t28, ptr %t32, i32 4, <4 x i1> %active)
  call void @llvm.masked.store.v4f32.p0(<4 x float> %t30, ptr %t33, i32 4, <4 x i1> %active)
  br label %latch
latch:
  %more = icmp ult i64 %i.next, %end
  br i1 %more, label %loop, label %exit
exit:
  br i1 %stream, label %exit.fence, label %exit.return
exit.fence:
  fence seq_cst
  br label %exit.return
exit.return:
  ret void
}

define internal void @kiln_kernel_split_pieces.p0(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, ptr noalias nocapture %frame) #1 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lit0.ins = insertelement <4 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <4 x i1> %lit0.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %in2.s = load float, ptr %buf1, align 4
  %in2.ins = insertelement <4 x float> poison, float %in2.s, i64 0
  %in2 = shufflevector <4 x float> %in2.ins, <4 x float> poison, <4 x i32> zeroinitializer
  br label %body
body:
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %t0 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t1 = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %t0, i32 4, <4 x i1> %active, <4 x float> poison)
  ret void
}

define internal void @kiln_kernel_split_pieces.p1(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, ptr noalias nocapture %frame) #1 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %in2.s = load float, ptr %buf1, align 4
  %in2.ins = insertelement <4 x float> poison, float %in2.s, i64 0
  %in2 = shufflevector <4 x float> %in2.ins, <4 x float> poison, <4 x i32> zeroinitializer
  %lit3.bits = bitcast i32 1073741824 to float
  %lit3.ins = insertelement <4 x float> poison, float %lit3.bits, i64 0
  %lit3 = shufflevector <4 x float> %lit3.ins, <4 x float> poison, <4 x i32> zeroinitializer
  br label %body
body:
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %t2 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t3 = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %t2, i32 4, <4 x i1> %active, <4 x float> poison)
  %t4 = fmul <4 x float> %t3, %lit3
  %t5 = fcmp olt <4 x float> %t4, %in2
  %t6 = getelementptr inbounds i8, ptr %frame, i64 0
  store <4 x float> %t4, ptr %t6, align 32
  %t7 = getelementptr inbounds i8, ptr %frame, i64 32
  store <4 x i1> %t5, ptr %t7, align 32
  ret void
}

define internal void @kiln_kernel_split_pieces.p2(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, ptr noalias nocapture %frame) #1 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %in2.s = load float, ptr %buf1, align 4
  %in2.ins = insertelement <4 x float> poison, float %in2.s, i64 0
  %in2 = shufflevector <4 x float> %in2.ins, <4 x float> poison, <4 x i32> zeroinitializer
  %lit3.bits = bitcast i32 1073741824 to float
  %lit3.ins = insertelement <4 x float> poison, float %lit3.bits, i64 0
  %lit3 = shufflevector <4 x float> %lit3.ins, <4 x float> poison, <4 x i32> zeroinitializer
  br label %body
body:
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %t8 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t9 = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %t8, i32 4, <4 x i1> %active, <4 x float> poison)
  %t10 = getelementptr inbounds i8, ptr %frame, i64 0
  %t11 = load <4 x float>, ptr %t10, align 32
  %t12 = getelementptr inbounds i8, ptr %frame, i64 32
  %t13 = load <4 x i1>, ptr %t12, align 32
  %t14 = fadd <4 x float> %t11, %in2
  %t15 = select <4 x i1> %t13, <4 x float> %t14, <4 x float> %t9
  %t16 = fsub <4 x float> %t15, %lit3
  %t17 = getelementptr inbounds i8, ptr %frame, i64 32
  store <4 x float> %t15, ptr %t17, align 32
  %t18 = getelementptr inbounds i8, ptr %frame, i64 64
  store <4 x float> %t16, ptr %t18, align 32
  ret void
}

define internal void @kiln_kernel_split_pieces.p3(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, ptr noalias nocapture %frame) #1 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  br label %body
body:
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %t19 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t20 = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %t19, i32 4, <4 x i1> %active, <4 x float> poison)
  %t21 = getelementptr inbounds i8, ptr %frame, i64 64
  %t22 = load <4 x float>, ptr %t21, align 32
  %t23 = fmul <4 x float> %t22, %t20
  %t24 = getelementptr inbounds i8, ptr %frame, i64 64
  store <4 x float> %t23, ptr %t24, align 32
  ret void
}

declare <4 x float> @llvm.masked.load.v4f32.p0(ptr, i32, <4 x i1>, <4 x float>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
attributes #1 = { noinline nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
