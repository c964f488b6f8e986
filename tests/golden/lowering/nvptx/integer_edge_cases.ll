; kiln kernel, nvptx, 1 lanes
define internal i1 @kiln_kernel_integer_edge_cases.lane(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check) #0 {
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
  %end.v.ins = insertelement <1 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <1 x i64> %end.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lit0.ins = insertelement <1 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <1 x i1> %lit0.ins, <1 x i1> poison, <1 x i32> zeroinitializer
  br label %loop
loop:
  %i.v.ins = insertelement <1 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <1 x i64> %i.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lane = add <1 x i64> %i.v, <i64 0>
  %active = icmp ult <1 x i64> %lane, %end.v
  %i.next = add i64 %i, 1
  %t0 = getelementptr inbounds i32, ptr %buf0, i64 %i
  %t1 = call <1 x i32> @llvm.masked.load.v1i32.p0(ptr %t0, i32 4, <1 x i1> %active, <1 x i32> poison)
  %t2 = getelementptr inbounds i32, ptr %buf1, i64 %i
  %t3 = call <1 x i32> @llvm.masked.load.v1i32.p0(ptr %t2, i32 4, <1 x i1> %active, <1 x i32> poison)
  %t4 = icmp eq <1 x i32> %t3, zeroinitializer
  %t5 = icmp eq <1 x i32> %t1, <i32 -2147483648>
  %t6 = icmp eq <1 x i32> %t3, <i32 -1>
  %t7 = and <1 x i1> %t5, %t6
  %t8 = or <1 x i1> %t4, %t7
  %t9 = select <1 x i1> %t8, <1 x i32> <i32 1>, <1 x i32> %t3
  %t10 = sdiv <1 x i32> %t1, %t9
  %t11 = select <1 x i1> %t4, <1 x i32> zeroinitializer, <1 x i32> %t10
  %t12 = icmp uge <1 x i32> %t3, <i32 32>
  %t13 = shl <1 x i32> %t1, %t3
  %t14 = select <1 x i1> %t12, <1 x i32> zeroinitializer, <1 x i32> %t13
  %t15 = sitofp <1 x i32> %t11 to <1 x double>
  %t16 = getelementptr inbounds i32, ptr %buf2, i64 %i
  %t17 = getelementptr inbounds i32, ptr %buf3, i64 %i
  %t18 = getelementptr inbounds double, ptr %buf4, i64 %i
  call void @llvm.masked.store.v1i32.p0(<1 x i32> %t11, ptr %t16, i32 4, <1 x i1> %active)
  call void @llvm.masked.store.v1i32.p0(<1 x i32> %t14, ptr %t17, i32 4, <1 x i1> %active)
  call void @llvm.masked.store.v1f64.p0(<1 x double> %t15, ptr %t18, i32 8, <1 x i1> %active)
  br label %latch
latch:
  br label %exit
exit:
  ret i1 false
}

define ptx_kernel void @kiln_kernel_integer_edge_cases(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) {
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
  %stop = call i1 @kiln_kernel_integer_edge_cases.lane(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare <1 x i32> @llvm.masked.load.v1i32.p0(ptr, i32, <1 x i1>, <1 x i32>)
declare void @llvm.masked.store.v1f64.p0(<1 x double>, ptr, i32, <1 x i1>)
declare void @llvm.masked.store.v1i32.p0(<1 x i32>, ptr, i32, <1 x i1>)

attributes #0 = { nounwind alwaysinline }
