; kiln kernel, 4 lanes
define void @kiln_kernel_gather_scatter_add(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
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
  %t3 = getelementptr inbounds i64, ptr %sizes, i64 0
  %t4 = load i64, ptr %t3, align 8
  %t5 = insertelement <4 x i64> poison, i64 %t4, i64 0
  %t6 = shufflevector <4 x i64> %t5, <4 x i64> poison, <4 x i32> zeroinitializer
  %t7 = icmp uge <4 x i64> %t1, %t6
  %t8 = and <4 x i1> %t2, %t7
  %t9 = call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %t8)
  br i1 %t9, label %s4.report, label %s4.resume
s4.report:
  %t10 = bitcast <4 x i1> %t8 to i4
  %t11 = zext i4 %t10 to i64
  %t12 = call i64 @llvm.cttz.i64(i64 %t11, i1 true)
  %t13 = extractelement <4 x i64> %t1, i64 %t12
  %t14 = call i64 @llvm.ctpop.i64(i64 %t11)
  %t15 = load ptr, ptr %check, align 8
  call void %t15(ptr %check, i32 4, i64 %t13, i64 %t4, i64 %t14)
  br label %s4.resume
s4.resume:
  %t16 = xor <4 x i1> %t7, <i1 true, i1 true, i1 true, i1 true>
  %t17 = and <4 x i1> %t2, %t16
  %t18 = getelementptr float, ptr %buf0, <4 x i64> %t1
  %t19 = call <4 x float> @llvm.masked.gather.v4f32.v4p0(<4 x ptr> %t18, i32 4, <4 x i1> %t17, <4 x float> zeroinitializer)
  %t20 = zext <4 x i32> %t0 to <4 x i64>
  %t21 = and <4 x i1> %active, %lit3
  %t22 = getelementptr inbounds i64, ptr %sizes, i64 1
  %t23 = load i64, ptr %t22, align 8
  %t24 = insertelement <4 x i64> poison, i64 %t23, i64 0
  %t25 = shufflevector <4 x i64> %t24, <4 x i64> poison, <4 x i32> zeroinitializer
  %t26 = icmp uge <4 x i64> %t20, %t25
  %t27 = and <4 x i1> %t21, %t26
  %t28 = call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %t27)
  br i1 %t28, label %s6.report, label %s6.resume
s6.report:
  %t29 = bitcast <4 x i1> %t27 to i4
  %t30 = zext i4 %t29 to i64
  %t31 = call i64 @llvm.cttz.i64(i64 %t30, i1 true)
  %t32 = extractelement <4 x i64> %t20, i64 %t31
  %t33 = call i64 @llvm.ctpop.i64(i64 %t30)
  %t34 = load ptr, ptr %check, align 8
  call void %t34(ptr %check, i32 6, i64 %t32, i64 %t23, i64 %t33)
  br label %s6.resume
s6.resume:
  %t35 = xor <4 x i1> %t26, <i1 true, i1 true, i1 true, i1 true>
  %t36 = and <4 x i1> %t21, %t35
  %t37 = bitcast <4 x i1> %t36 to i4
  %t38 = zext i4 %t37 to i64
  br label %s6.head
s6.head:
  %s6.m = phi i64 [ %t38, %s6.resume ], [ %s6.mnext, %s6.next ]
  %s6.none = icmp eq i64 %s6.m, 0
  br i1 %s6.none, label %s6.done, label %s6.lane
s6.lane:
  %t39 = call i64 @llvm.cttz.i64(i64 %s6.m, i1 true)
  %t40 = sub i64 %s6.m, 1
  %s6.mnext = and i64 %s6.m, %t40
  %t41 = extractelement <4 x i64> %t20, i64 %t39
  %t42 = getelementptr float, ptr %buf1, i64 %t41
  %t43 = extractelement <4 x float> %t19, i64 %t39
  %t44 = atomicrmw fadd ptr %t42, float %t43 monotonic, align 4
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
declare i1 @llvm.vector.reduce.or.v4i1(<4 x i1>)
declare i64 @llvm.ctpop.i64(i64)
declare i64 @llvm.cttz.i64(i64, i1)

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
