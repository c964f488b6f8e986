; kiln kernel, nvptx, 1 lanes
define internal i1 @kiln_kernel_scatter_inc.lane(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check) #0 {
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
  %lit2.ins = insertelement <1 x i32> poison, i32 0, i64 0
  %lit2 = shufflevector <1 x i32> %lit2.ins, <1 x i32> poison, <1 x i32> zeroinitializer
  %s4.size.p = getelementptr inbounds i64, ptr %sizes, i64 0
  %s4.size = load i64, ptr %s4.size.p, align 8
  %s4.small = icmp ult i64 %s4.size, 4294967296
  %s4.count = select i1 %s4.small, i64 %s4.size, i64 4294967296
  %s4.last64 = sub i64 %s4.count, 1
  %s4.last.s = trunc i64 %s4.last64 to i32
  %s4.empty.s = icmp eq i64 %s4.size, 0
  %s4.last.ins = insertelement <1 x i32> poison, i32 %s4.last.s, i64 0
  %s4.last = shufflevector <1 x i32> %s4.last.ins, <1 x i32> poison, <1 x i32> zeroinitializer
  %s4.empty.ins = insertelement <1 x i1> poison, i1 %s4.empty.s, i64 0
  %s4.empty = shufflevector <1 x i1> %s4.empty.ins, <1 x i1> poison, <1 x i32> zeroinitializer
  br label %loop
loop:
  %i.v.ins = insertelement <1 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <1 x i64> %i.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lane = add <1 x i64> %i.v, <i64 0>
  %active = icmp ult <1 x i64> %lane, %end.v
  %i.next = add i64 %i, 1
  %t0 = getelementptr inbounds i8, ptr %buf1, i64 %i
  %t1 = call <1 x i8> @llvm.masked.load.v1i8.p0(ptr %t0, i32 1, <1 x i1> %active, <1 x i8> poison)
  %in3.b = icmp ne <1 x i8> %t1, zeroinitializer
  %t2 = zext <1 x i32> %lit2 to <1 x i64>
  %t3 = and <1 x i1> %active, %in3.b
  %t4 = icmp ugt <1 x i32> %lit2, %s4.last
  %t5 = or <1 x i1> %t4, %s4.empty
  %t6 = xor <1 x i1> %t5, <i1 true>
  %t7 = and <1 x i1> %t3, %t6
  %t8 = extractelement <1 x i1> %t7, i64 0
  br i1 %t8, label %s4.lane, label %s4.done
s4.lane:
  %t9 = extractelement <1 x i64> %t2, i64 0
  %t10 = getelementptr i32, ptr %buf0, i64 %t9
  %t11 = atomicrmw add ptr %t10, i32 1 monotonic, align 4
  %t12 = insertelement <1 x i32> zeroinitializer, i32 %t11, i64 0
  br label %s4.done
s4.done:
  %s4.acc = phi <1 x i32> [ %t12, %s4.lane ], [ zeroinitializer, %loop ]
  %t13 = getelementptr inbounds i32, ptr %buf2, i64 %i
  call void @llvm.masked.store.v1i32.p0(<1 x i32> %s4.acc, ptr %t13, i32 4, <1 x i1> %active)
  br label %latch
latch:
  br label %exit
exit:
  ret i1 false
}

define ptx_kernel void @kiln_kernel_scatter_inc(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) {
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
  %stop = call i1 @kiln_kernel_scatter_inc.lane(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare <1 x i8> @llvm.masked.load.v1i8.p0(ptr, i32, <1 x i1>, <1 x i8>)
declare void @llvm.masked.store.v1i32.p0(<1 x i32>, ptr, i32, <1 x i1>)

attributes #0 = { nounwind alwaysinline }
