; kiln kernel, nvptx, 1 lanes
define internal i1 @kiln_kernel_parameters.lane(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <1 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <1 x i64> %end.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %par1.p = getelementptr inbounds i64, ptr %params, i64 0
  %par1.bits = load i64, ptr %par1.p, align 8
  %par1.n = trunc i64 %par1.bits to i32
  %par1.v = bitcast i32 %par1.n to float
  %par1.ins = insertelement <1 x float> poison, float %par1.v, i64 0
  %par1 = shufflevector <1 x float> %par1.ins, <1 x float> poison, <1 x i32> zeroinitializer
  %par3.p = getelementptr inbounds i64, ptr %params, i64 1
  %par3.bits = load i64, ptr %par3.p, align 8
  %par3.n = trunc i64 %par3.bits to i32
  %par3.ins = insertelement <1 x i32> poison, i32 %par3.n, i64 0
  %par3 = shufflevector <1 x i32> %par3.ins, <1 x i32> poison, <1 x i32> zeroinitializer
  %par6.p = getelementptr inbounds i64, ptr %params, i64 2
  %par6.bits = load i64, ptr %par6.p, align 8
  %par6.n = trunc i64 %par6.bits to i1
  %par6.ins = insertelement <1 x i1> poison, i1 %par6.n, i64 0
  %par6 = shufflevector <1 x i1> %par6.ins, <1 x i1> poison, <1 x i32> zeroinitializer
  br label %loop
loop:
  %i.v.ins = insertelement <1 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <1 x i64> %i.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lane = add <1 x i64> %i.v, <i64 0>
  %active = icmp ult <1 x i64> %lane, %end.v
  %i.next = add i64 %i, 1
  %t0 = getelementptr inbounds float, ptr %buf0, i64 %i
  %t1 = call <1 x float> @llvm.masked.load.v1f32.p0(ptr %t0, i32 4, <1 x i1> %active, <1 x float> poison)
  %t2 = fmul <1 x float> %t1, %par1
  %t3 = uitofp <1 x i32> %par3 to <1 x float>
  %t4 = fadd <1 x float> %t2, %t3
  %t5 = select <1 x i1> %par6, <1 x float> %t4, <1 x float> %t1
  %t6 = getelementptr inbounds float, ptr %buf1, i64 %i
  call void @llvm.masked.store.v1f32.p0(<1 x float> %t5, ptr %t6, i32 4, <1 x i1> %active)
  br label %latch
latch:
  br label %exit
exit:
  ret i1 false
}

define ptx_kernel void @kiln_kernel_parameters(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) {
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
  %stop = call i1 @kiln_kernel_parameters.lane(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare <1 x float> @llvm.masked.load.v1f32.p0(ptr, i32, <1 x i1>, <1 x float>)
declare void @llvm.masked.store.v1f32.p0(<1 x float>, ptr, i32, <1 x i1>)

attributes #0 = { nounwind alwaysinline }
