; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_parameters(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %par1.p = getelementptr inbounds i64, ptr %params, i64 0
  %par1.bits = load i64, ptr %par1.p, align 8
  %par1.n = trunc i64 %par1.bits to i32
  %par1.v = bitcast i32 %par1.n to float
  %par1.ins = insertelement <4 x float> poison, float %par1.v, i64 0
  %par1 = shufflevector <4 x float> %par1.ins, <4 x float> poison, <4 x i32> zeroinitializer
  %par3.p = getelementptr inbounds i64, ptr %params, i64 1
  %par3.bits = load i64, ptr %par3.p, align 8
  %par3.n = trunc i64 %par3.bits to i32
  %par3.ins = insertelement <4 x i32> poison, i32 %par3.n, i64 0
  %par3 = shufflevector <4 x i32> %par3.ins, <4 x i32> poison, <4 x i32> zeroinitializer
  %par6.p = getelementptr inbounds i64, ptr %params, i64 2
  %par6.bits = load i64, ptr %par6.p, align 8
  %par6.n = trunc i64 %par6.bits to i1
  %par6.ins = insertelement <4 x i1> poison, i1 %par6.n, i64 0
  %par6 = shufflevector <4 x i1> %par6.ins, <4 x i1> poison, <4 x i32> zeroinitializer
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
  %t2 = fmul <4 x float> %t1, %par1
  %t3 = uitofp <4 x i32> %par3 to <4 x float>
  %t4 = fadd <4 x float> %t2, %t3
  %t5 = select <4 x i1> %par6, <4 x float> %t4, <4 x float> %t1
  %t6 = getelementptr inbounds float, ptr %buf1, i64 %i
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

declare <4 x float> @llvm.masked.load.v4f32.p0(ptr, i32, <4 x i1>, <4 x float>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
