; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_checked_gather_scatter_add(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lit0.ins = insertelement <4 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <4 x i1> %lit0.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %lit3.ins = insertelement <4 x i1> poison, i1 true, i64 0
  %lit3 = shufflevector <4 x i1> %lit3.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %s4.size.p = getelementptr inbounds i64, ptr %sizes, i64 0
  %s4.size = load i64, ptr %s4.size.p, align 8
  %s4.small = icmp ult i64 %s4.size, 4294967296
  %s4.count = select i1 %s4.small, i64 %s4.size, i64 4294967296
  %s4.last64 = sub i64 %s4.count, 1
  %s4.last.s = trunc i64 %s4.last64 to i32
  %s4.empty.s = icmp eq i64 %s4.size, 0
  %s4.last.ins = insertelement <4 x i32> poison, i32 %s4.last.s, i64 0
  %s4.last = shufflevector <4 x i32> %s4.last.ins, <4 x i32> poison, <4 x i32> zeroinitializer
  %s4.empty.ins = insertelement <4 x i1> poison, i1 %s4.empty.s, i64 0
  %s4.empty = shufflevector <4 x i1> %s4.empty.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %s6.size.p = getelementptr inbounds i64, ptr %sizes, i64 1
  %s6.size = load i64, ptr %s6.size.p, align 8
  %s6.small = icmp ult i64 %s6.size, 4294967296
  %s6.count = select i1 %s6.small, i64 %s6.size, i64 4294967296
  %s6.last64 = sub i64 %s6.count, 1
  %s6.last.s = trunc i64 %s6.last64 to i32
  %s6.empty.s = icmp eq i64 %s6.size, 0
  %s6.last.ins = insertelement <4 x i32> poison, i32 %s6.last.s, i64 0
  %s6.last = shufflevector <4 x i32> %s6.last.ins, <4 x i32> poison, <4 x i32> zeroinitializer
  %s6.empty.ins = insertelement <4 x i1> poison, i1 %s6.empty.s, i64 0
  %s6.empty = shufflevector <4 x i1> %s6.empty.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %stream = icmp ne i64 %stream.flag, 0
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %i.next = add i64 %i, 4
  %t0 = trunc <4 x i64> %lane to <4 x i32>
  %t1 = zext <4 x i32> %t0 to <4 x i64>
  %t2 = and <4 x i1> %active, %lit3
  %t3 = icmp ugt <4 x i32> %t0, %s4.last
  %t4 = or <4 x i1> %t3, %s4.empty
  %t5 = xor <4 x i1> %t4, <i1 true, i1 true, i1 true, i1 true>
  %t6 = and <4 x i1> %t2, %t5
  %t7 = and <4 x i1> %t2, %t4
  %t8 = call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %t7)
  br i1 %t8, label %s4.report, label %s4.resume, !prof !1
s4.report:
  %t9 = bitcast <4 x i1> %t7 to i4
  %t10 = zext i4 %t9 to i64
  %t11 = call i64 @llvm.cttz.i64(i64 %t10, i1 true)
  %t12 = extractelement <4 x i64> %t1, i64 %t11
  %t13 = call i64 @llvm.ctpop.i64(i64 %t10)
  %t14 = load ptr, ptr %check, align 8
  call void %t14(ptr %check, i32 4, i64 %t12, i64 %s4.size, i64 %t13)
  br label %s4.resume
s4.resume:
  %t15 = getelementptr float, ptr %buf0, i64 2147483648
  %t16 = xor <4 x i32> %t0, <i32 -2147483648, i32 -2147483648, i32 -2147483648, i32 -2147483648>
  %t17 = getelementptr float, ptr %t15, <4 x i32> %t16
  %t18 = call <4 x float> @llvm.masked.gather.v4f32.v4p0(<4 x ptr> %t17, i32 4, <4 x i1> %t6, <4 x float> zeroinitializer)
  %t19 = zext <4 x i32> %t0 to <4 x i64>
  %t20 = and <4 x i1> %active, %lit3
  %t21 = icmp ugt <4 x i32> %t0, %s6.last
  %t22 = or <4 x i1> %t21, %s6.empty
  %t23 = xor <4 x i1> %t22, <i1 true, i1 true, i1 true, i1 true>
  %t24 = and <4 x i1> %t20, %t23
  %t25 = and <4 x i1> %t20, %t22
  %t26 = call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %t25)
  br i1 %t26, label %s6.report, label %s6.resume, !prof !1
s6.report:
  %t27 = bitcast <4 x i1> %t25 to i4
  %t28 = zext i4 %t27 to i64
  %t29 = call i64 @llvm.cttz.i64(i64 %t28, i1 true)
  %t30 = extractelement <4 x i64> %t19, i64 %t29
  %t31 = call i64 @llvm.ctpop.i64(i64 %t28)
  %t32 = load ptr, ptr %check, align 8
  call void %t32(ptr %check, i32 6, i64 %t30, i64 %s6.size, i64 %t31)
  br label %s6.resume
s6.resume:
  %t33 = bitcast <4 x i1> %t24 to i4
  %t34 = zext i4 %t33 to i64
  br label %s6.head
s6.head:
  %s6.m = phi i64 [ %t34, %s6.resume ], [ %s6.mnext, %s6.next ]
  %s6.none = icmp eq i64 %s6.m, 0
  br i1 %s6.none, label %s6.done, label %s6.lane
s6.lane:
  %t35 = call i64 @llvm.cttz.i64(i64 %s6.m, i1 true)
  %t36 = extractelement <4 x i64> %t19, i64 %t35
  %t37 = insertelement <4 x i64> poison, i64 %t36, i64 0
  %t38 = shufflevector <4 x i64> %t37, <4 x i64> poison, <4 x i32> zeroinitializer
  %t39 = icmp eq <4 x i64> %t19, %t38
  %t40 = and <4 x i1> %t39, %t24
  %t41 = bitcast <4 x i1> %t40 to i4
  %t42 = zext i4 %t41 to i64
  %t43 = xor i64 %t42, -1
  %s6.mnext = and i64 %s6.m, %t43
  %t44 = getelementptr float, ptr %buf1, i64 %t36
  %t45 = select <4 x i1> %t40, <4 x float> %t18, <4 x float> <float -0.0, float -0.0, float -0.0, float -0.0>
  %t46 = call reassoc float @llvm.vector.reduce.fadd.v4f32(float -0.0, <4 x float> %t45)
  %t47 = atomicrmw fadd ptr %t44, float %t46 monotonic, align 4
  br label %s6.next
s6.next:
  br label %s6.head
s6.done:
  br label %latch
latch:
  %more = icmp ult i64 %i.next, %end
  br i1 %more, label %loop, label %exit
exit:
  ret void
}

declare <4 x float> @llvm.masked.gather.v4f32.v4p0(<4 x ptr>, i32, <4 x i1>, <4 x float>)
declare float @llvm.vector.reduce.fadd.v4f32(float, <4 x float>)
declare i1 @llvm.vector.reduce.or.v4i1(<4 x i1>)
declare i64 @llvm.ctpop.i64(i64)
declare i64 @llvm.cttz.i64(i64, i1)
!1 = !{!"branch_weights", i32 1, i32 1048575}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
