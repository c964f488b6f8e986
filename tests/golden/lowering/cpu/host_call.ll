; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_host_call(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
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
  %lit0.ins = insertelement <4 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <4 x i1> %lit0.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %par3.p = getelementptr inbounds i64, ptr %params, i64 0
  %par3.bits = load i64, ptr %par3.p, align 8
  %par3.ins = insertelement <4 x i64> poison, i64 %par3.bits, i64 0
  %par3 = shufflevector <4 x i64> %par3.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %par4.p = getelementptr inbounds i64, ptr %params, i64 1
  %par4.bits = load i64, ptr %par4.p, align 8
  %par4.ins = insertelement <4 x i64> poison, i64 %par4.bits, i64 0
  %par4 = shufflevector <4 x i64> %par4.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %s8.in0 = alloca [4 x float], align 64
  %s8.in1 = alloca [4 x i32], align 64
  %s8.out0 = alloca [4 x float], align 64
  %s8.out1 = alloca [4 x i8], align 64
  %s8.lanes = alloca [4 x i32], align 64
  %s8.inputs = alloca [2 x ptr], align 8
  %s8.inputs.0 = getelementptr inbounds ptr, ptr %s8.inputs, i64 0
  store ptr %s8.in0, ptr %s8.inputs.0, align 8
  %s8.inputs.1 = getelementptr inbounds ptr, ptr %s8.inputs, i64 1
  store ptr %s8.in1, ptr %s8.inputs.1, align 8
  %s8.outputs = alloca [2 x ptr], align 8
  %s8.outputs.0 = getelementptr inbounds ptr, ptr %s8.outputs, i64 0
  store ptr %s8.out0, ptr %s8.outputs.0, align 8
  %s8.outputs.1 = getelementptr inbounds ptr, ptr %s8.outputs, i64 1
  store ptr %s8.out1, ptr %s8.outputs.1, align 8
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
  %t2 = getelementptr inbounds i32, ptr %buf1, i64 %i
  %t3 = call <4 x i32> @llvm.masked.load.v4i32.p0(ptr %t2, i32 4, <4 x i1> %active, <4 x i32> poison)
  %t4 = getelementptr inbounds i8, ptr %buf2, i64 %i
  %t5 = call <4 x i8> @llvm.masked.load.v4i8.p0(ptr %t4, i32 1, <4 x i1> %active, <4 x i8> poison)
  %in5.b = icmp ne <4 x i8> %t5, zeroinitializer
  %t6 = and <4 x i1> %active, %in5.b
  %t7 = call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %t6)
  br i1 %t7, label %s8.call, label %s8.called
s8.call:
  store <4 x float> %t1, ptr %s8.in0, align 64
  store <4 x i32> %t3, ptr %s8.in1, align 64
  %t8 = sext <4 x i1> %t6 to <4 x i32>
  store <4 x i32> %t8, ptr %s8.lanes, align 64
  %t9 = extractelement <4 x i64> %par3, i64 0
  %t10 = inttoptr i64 %t9 to ptr
  %t11 = extractelement <4 x i64> %par4, i64 0
  %t12 = inttoptr i64 %t11 to ptr
  call void %t10(ptr %t12, i32 4, ptr %s8.lanes, ptr %s8.inputs, ptr %s8.outputs)
  br label %s8.called
s8.called:
  %t13 = load <4 x float>, ptr %s8.out0, align 64
  %t14 = select <4 x i1> %t6, <4 x float> %t13, <4 x float> zeroinitializer
  %t15 = load <4 x i8>, ptr %s8.out1, align 64
  %s10.b = icmp ne <4 x i8> %t15, zeroinitializer
  %t16 = select <4 x i1> %t6, <4 x i1> %s10.b, <4 x i1> zeroinitializer
  %t17 = getelementptr inbounds float, ptr %buf3, i64 %i
  %t18 = getelementptr inbounds i8, ptr %buf4, i64 %i
  %t19 = zext <4 x i1> %t16 to <4 x i8>
  %full = icmp ule i64 %i.next, %end
  %streaming = and i1 %full, %stream
  br i1 %streaming, label %store.stream, label %store.masked
store.stream:
  store <4 x float> %t14, ptr %t17, align 16, !nontemporal !0
  store <4 x i8> %t19, ptr %t18, align 4, !nontemporal !0
  br label %latch
store.masked:
  call void @llvm.masked.store.v4f32.p0(<4 x float> %t14, ptr %t17, i32 4, <4 x i1> %active)
  call void @llvm.masked.store.v4i8.p0(<4 x i8> %t19, ptr %t18, i32 1, <4 x i1> %active)
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
declare <4 x i32> @llvm.masked.load.v4i32.p0(ptr, i32, <4 x i1>, <4 x i32>)
declare <4 x i8> @llvm.masked.load.v4i8.p0(ptr, i32, <4 x i1>, <4 x i8>)
declare i1 @llvm.vector.reduce.or.v4i1(<4 x i1>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, i32, <4 x i1>)
declare void @llvm.masked.store.v4i8.p0(<4 x i8>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
