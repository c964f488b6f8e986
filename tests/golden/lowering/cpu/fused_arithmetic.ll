; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_fused_arithmetic(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %buf.p2 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %buf.p2, align 8
  %buf.p3 = getelementptr inbounds ptr, ptr %buffers, i64 3
  %buf3 = load ptr, ptr %buf.p3, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lit0.ins = insertelement <4 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <4 x i1> %lit0.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %lit3.bits = bitcast i32 1075838976 to float
  %lit3.ins = insertelement <4 x float> poison, float %lit3.bits, i64 0
  %lit3 = shufflevector <4 x float> %lit3.ins, <4 x float> poison, <4 x i32> zeroinitializer
  %in5.s = load float, ptr %buf2, align 4
  %in5.ins = insertelement <4 x float> poison, float %in5.s, i64 0
  %in5 = shufflevector <4 x float> %in5.ins, <4 x float> poison, <4 x i32> zeroinitializer
  %stream = icmp ne i64 %stream.flag, 0
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %i.next = add i64 %i, 4
  %t0 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t1 = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %t0, i32 4, <4 x i1> %active, <4 x float> poison)
  %t2 = getelementptr inbounds float, ptr %buf1, i64 %i
  %t3 = call <4 x float> @llvm.masked.load.v4f32.p0(ptr %t2, i32 4, <4 x i1> %active, <4 x float> poison)
  %t4 = call <4 x float> @llvm.fma.v4f32(<4 x float> %t1, <4 x float> %t3, <4 x float> %lit3)
  %t5 = fadd <4 x float> %t4, %in5
  %t6 = getelementptr inbounds float, ptr %buf3, i64 %i
  %full = icmp ule i64 %i.next, %end
  %streaming = and i1 %full, %stream
  br i1 %streaming, label %store.stream, label %store.masked
store.stream:
  store <4 x float> %t5, ptr %t6, align 16, !nontemporal !0
  br label %latch
store.masked:
  call void @llvm.masked.store.v4f32.p0(<4 x float> %t5, ptr %t6, i32 4, <4 x i1> %active)
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

declare <4 x float> @llvm.fma.v4f32(<4 x float>, <4 x float>, <4 x float>)
declare <4 x float> @llvm.masked.load.v4f32.p0(ptr, i32, <4 x i1>, <4 x float>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
