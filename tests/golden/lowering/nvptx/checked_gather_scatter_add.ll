; kiln kernel, nvptx, 1 lanes
define internal i1 @kiln_kernel_checked_gather_scatter_add.lane(i64 %i, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <1 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <1 x i64> %end.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lit0.ins = insertelement <1 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <1 x i1> %lit0.ins, <1 x i1> poison, <1 x i32> zeroinitializer
  %lit3.ins = insertelement <1 x i1> poison, i1 true, i64 0
  %lit3 = shufflevector <1 x i1> %lit3.ins, <1 x i1> poison, <1 x i32> zeroinitializer
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
  %s6.size.p = getelementptr inbounds i64, ptr %sizes, i64 1
  %s6.size = load i64, ptr %s6.size.p, align 8
  %s6.small = icmp ult i64 %s6.size, 4294967296
  %s6.count = select i1 %s6.small, i64 %s6.size, i64 4294967296
  %s6.last64 = sub i64 %s6.count, 1
  %s6.last.s = trunc i64 %s6.last64 to i32
  %s6.empty.s = icmp eq i64 %s6.size, 0
  %s6.last.ins = insertelement <1 x i32> poison, i32 %s6.last.s, i64 0
  %s6.last = shufflevector <1 x i32> %s6.last.ins, <1 x i32> poison, <1 x i32> zeroinitializer
  %s6.empty.ins = insertelement <1 x i1> poison, i1 %s6.empty.s, i64 0
  %s6.empty = shufflevector <1 x i1> %s6.empty.ins, <1 x i1> poison, <1 x i32> zeroinitializer
  br label %loop
loop:
  %i.v.ins = insertelement <1 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <1 x i64> %i.v.ins, <1 x i64> poison, <1 x i32> zeroinitializer
  %lane = add <1 x i64> %i.v, <i64 0>
  %active = icmp ult <1 x i64> %lane, %end.v
  %i.next = add i64 %i, 1
  %t0 = trunc <1 x i64> %lane to <1 x i32>
  %t1 = zext <1 x i32> %t0 to <1 x i64>
  %t2 = and <1 x i1> %active, %lit3
  %t3 = icmp ugt <1 x i32> %t0, %s4.last
  %t4 = or <1 x i1> %t3, %s4.empty
  %t5 = xor <1 x i1> %t4, <i1 true>
  %t6 = and <1 x i1> %t2, %t5
  %t7 = and <1 x i1> %t2, %t4
  %t8 = call i1 @llvm.vector.reduce.or.v1i1(<1 x i1> %t7)
  br i1 %t8, label %s4.report, label %s4.resume, !prof !1
s4.report:
  %t9 = bitcast <1 x i1> %t7 to i1
  %t10 = zext i1 %t9 to i64
  %t11 = call i64 @llvm.cttz.i64(i64 %t10, i1 true)
  %t12 = extractelement <1 x i64> %t1, i64 %t11
  %t13 = call i64 @llvm.ctpop.i64(i64 %t10)
  %t14 = getelementptr inbounds i8, ptr %check, i64 16
  %t15 = cmpxchg ptr %t14, i32 0, i32 1 monotonic monotonic, align 4
  %t16 = extractvalue { i32, i1 } %t15, 1
  %t17 = getelementptr inbounds i8, ptr %check, i64 24
  %t18 = atomicrmw add ptr %t17, i64 %t13 monotonic, align 8
  br i1 %t16, label %s4.first, label %s4.recorded
s4.first:
  %t19 = getelementptr inbounds i8, ptr %check, i64 32
  %t20 = getelementptr inbounds i8, ptr %check, i64 40
  %t21 = getelementptr inbounds i8, ptr %check, i64 48
  store i32 4, ptr %t19, align 4
  store i64 %t12, ptr %t20, align 8
  store i64 %s4.size, ptr %t21, align 8
  br label %s4.recorded
s4.recorded:
  br label %s4.resume
s4.resume:
  %t22 = getelementptr float, ptr %buf0, <1 x i64> %t1
  %t23 = call <1 x float> @llvm.masked.gather.v1f32.v1p0(<1 x ptr> %t22, i32 4, <1 x i1> %t6, <1 x float> zeroinitializer)
  %t24 = zext <1 x i32> %t0 to <1 x i64>
  %t25 = and <1 x i1> %active, %lit3
  %t26 = icmp ugt <1 x i32> %t0, %s6.last
  %t27 = or <1 x i1> %t26, %s6.empty
  %t28 = xor <1 x i1> %t27, <i1 true>
  %t29 = and <1 x i1> %t25, %t28
  %t30 = and <1 x i1> %t25, %t27
  %t31 = call i1 @llvm.vector.reduce.or.v1i1(<1 x i1> %t30)
  br i1 %t31, label %s6.report, label %s6.resume, !prof !1
s6.report:
  %t32 = bitcast <1 x i1> %t30 to i1
  %t33 = zext i1 %t32 to i64
  %t34 = call i64 @llvm.cttz.i64(i64 %t33, i1 true)
  %t35 = extractelement <1 x i64> %t24, i64 %t34
  %t36 = call i64 @llvm.ctpop.i64(i64 %t33)
  %t37 = getelementptr inbounds i8, ptr %check, i64 16
  %t38 = cmpxchg ptr %t37, i32 0, i32 1 monotonic monotonic, align 4
  %t39 = extractvalue { i32, i1 } %t38, 1
  %t40 = getelementptr inbounds i8, ptr %check, i64 24
  %t41 = atomicrmw add ptr %t40, i64 %t36 monotonic, align 8
  br i1 %t39, label %s6.first, label %s6.recorded
s6.first:
  %t42 = getelementptr inbounds i8, ptr %check, i64 32
  %t43 = getelementptr inbounds i8, ptr %check, i64 40
  %t44 = getelementptr inbounds i8, ptr %check, i64 48
  store i32 6, ptr %t42, align 4
  store i64 %t35, ptr %t43, align 8
  store i64 %s6.size, ptr %t44, align 8
  br label %s6.recorded
s6.recorded:
  br label %s6.resume
s6.resume:
  %t45 = extractelement <1 x i1> %t29, i64 0
  br i1 %t45, label %s6.lane, label %s6.done
s6.lane:
  %t46 = extractelement <1 x i64> %t24, i64 0
  %t47 = getelementptr float, ptr %buf1, i64 %t46
  %t48 = select <1 x i1> %t29, <1 x float> %t23, <1 x float> <float -0.0>
  %t49 = call reassoc float @llvm.vector.reduce.fadd.v1f32(float -0.0, <1 x float> %t48)
  %t50 = atomicrmw fadd ptr %t47, float %t49 monotonic, align 4
  br label %s6.done
s6.done:
  br label %latch
latch:
  br label %exit
exit:
  ret i1 false
}

define ptx_kernel void @kiln_kernel_checked_gather_scatter_add(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) {
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
  %stop = call i1 @kiln_kernel_checked_gather_scatter_add.lane(i64 %i, i64 %end, ptr %buffers, ptr %sizes, ptr %params, ptr %check)
  br label %done
done:
  ret void
}

declare i32 @llvm.nvvm.read.ptx.sreg.tid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ntid.x()
declare i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()

declare <1 x float> @llvm.masked.gather.v1f32.v1p0(<1 x ptr>, i32, <1 x i1>, <1 x float>)
declare float @llvm.vector.reduce.fadd.v1f32(float, <1 x float>)
declare i1 @llvm.vector.reduce.or.v1i1(<1 x i1>)
declare i64 @llvm.ctpop.i64(i64)
declare i64 @llvm.cttz.i64(i64, i1)
!1 = !{!"branch_weights", i32 1, i32 1048575}

attributes #0 = { nounwind alwaysinline }
