; kiln kernel, nvptx, 1 lanes
define internal i1 @kiln_kernel_guarded_call.lane(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %buf.p2 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %buf.p2, align 8
  %end.v.ins = insertelement <1 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <1 x i64> %end.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lit0.ins = insertelement <1 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <1 x i1> %lit0.ins, <1 x i1> poison, <1 x i32> zeroinitializer
  %lit3.bits = bitcast i32 0 to float
  %lit3.ins = insertelement <1 x float> poison, float %lit3.bits, i64 0
  %lit3 = shufflevector <1 x float> %lit3.ins, <1 x float> poison, <1 x i32> zeroinitializer
  %lit4.bits = bitcast i32 1073741824 to float
  %lit4.ins = insertelement <1 x float> poison, float %lit4.bits, i64 0
  %lit4 = shufflevector <1 x float> %lit4.ins, <1 x float> poison, <1 x i32> zeroinitializer
  br label %loop
loop:
  %i.v.ins = insertelement <1 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <1 x i64> %i.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lane = add <1 x i64> %i.v, <i64 0>
  %active = icmp ult <1 x i64> %lane, %end.v
  %i.next = add i64 %i, 1
  %t0 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t1 = call <1 x float> @llvm.masked.load.v1f32.p0(ptr %t0, i32 4, <1 x i1> %active, <1 x float> poison)
  %t2 = getelementptr inbounds i8, ptr %buf1, i64 %i
  %t3 = call <1 x i8> @llvm.masked.load.v1i8.p0(ptr %t2, i32 1, <1 x i1> %active, <1 x i8> poison)
  %in2.b = icmp ne <1 x i8> %t3, zeroinitializer
  br label %L5.pre
L5.pre:
  br label %L5.head
L5.head:
  %L5.active = and <1 x i1> %active, %in2.b
  %t4 = call i1 @llvm.vector.reduce.or.v1i1(<1 x i1> %L5.active)
  br i1 %t4, label %L5.body, label %L5.exit
L5.body:
  %t5 = fmul <1 x float> %t1, %lit4
  br label %L5.exit
L5.exit:
  %s6 = phi <1 x float> [ %t5, %L5.body ], [ %lit3, %L5.head ]
  %t6 = getelementptr inbounds float, ptr %buf2, i64 %i
  call void @llvm.masked.store.v1f32.p0(<1 x float> %s6, ptr %t6, i32 4, <1 x i1> %active)
  br label %latch
latch:
  br label %exit
exit:
  ret i1 false
}

define ptx_kernel void @kiln_kernel_guarded_call(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) {
entry:
  %tid = call i32 @llvm.nvvm.read.ptx.sreg.tid.x()
  %tid.64 = zext i32 %tid to i64
  %ntid = call i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
  %ntid.64 = zext i32 %ntid to i64
  %ctaid = call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()
  %ctaid.64 = zext i32 %ctaid to i64
  %block = mul i64 %ctaid.64, %ntid.64
  %thread = add i64 %block, %tid.64
  %i = add i64 %start, %thread
  %inside = icmp ult i64 %i, %end
  br i1 %inside, label %run, label %done
run:
  %stop = call i1 @kiln_kernel_guarded_call.lane(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare <1 x float> @llvm.masked.load.v1f32.p0(ptr, i32, <1 x i1>, <1 x float>)
declare <1 x i8> @llvm.masked.load.v1i8.p0(ptr, i32, <1 x i1>, <1 x i8>)
declare i1 @llvm.vector.reduce.or.v1i1(<1 x i1>)
declare void @llvm.masked.store.v1f32.p0(<1 x float>, ptr, i32, <1 x i1>)

attributes #0 = { nounwind alwaysinline }
