; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_integer_edge_cases(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
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
  %stream = icmp ne i64 %stream.flag, 0
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %i.next = add i64 %i, 4
  %t0 = getelementptr inbounds i32, ptr %buf0, i64 %i
  %t1 = call <4 x i32> @llvm.masked.load.v4i32.p0(ptr %t0, i32 4, <4 x i1> %active, <4 x i32> poison)
  %t2 = getelementptr inbounds i32, ptr %buf1, i64 %i
  %t3 = call <4 x i32> @llvm.masked.load.v4i32.p0(ptr %t2, i32 4, <4 x i1> %active, <4 x i32> poison)
  %t4 = icmp eq <4 x i32> %t3, zeroinitializer
  %t5 = icmp eq <4 x i32> %t1, <i32 -2147483648, i32 -2147483648, i32 -2147483648, i32 -2147483648>
  %t6 = icmp eq <4 x i32> %t3, <i32 -1, i32 -1, i32 -1, i32 -1>
  %t7 = and <4 x i1> %t5, %t6
  %t8 = or <4 x i1> %t4, %t7
  %t9 = select <4 x i1> %t8, <4 x i32> <i32 1, i32 1, i32 1, i32 1>, <4 x i32> %t3
  %t10 = sdiv <4 x i32> %t1, %t9
  %t11 = select <4 x i1> %t4, <4 x i32> zeroinitializer, <4 x i32> %t10
  %t12 = icmp uge <4 x i32> %t3, <i32 32, i32 32, i32 32, i32 32>
  %t13 = shl <4 x i32> %t1, %t3
  %t14 = select <4 x i1> %t12, <4 x i32> zeroinitializer, <4 x i32> %t13
  %t15 = sitofp <4 x i32> %t11 to <4 x double>
  %t16 = getelementptr inbounds i32, ptr %buf2, i64 %i
  %t17 = getelementptr inbounds i32, ptr %buf3, i64 %i
  %t18 = getelementptr inbounds double, ptr %buf4, i64 %i
  %full = icmp ule i64 %i.next, %end
  %streaming = and i1 %full, %stream
  br i1 %streaming, label %store.stream, label %store.masked
store.stream:
  store <4 x i32> %t11, ptr %t16, align 16, !nontemporal !0
  store <4 x i32> %t14, ptr %t17, align 16, !nontemporal !0
  store <4 x double> %t15, ptr %t18, align 32, !nontemporal !0
  br label %latch
store.masked:
  call void @llvm.masked.store.v4i32.p0(<4 x i32> %t11, ptr %t16, i32 4, <4 x i1> %active)
  call void @llvm.masked.store.v4i32.p0(<4 x i32> %t14, ptr %t17, i32 4, <4 x i1> %active)
  call void @llvm.masked.store.v4f64.p0(<4 x double> %t15, ptr %t18, i32 8, <4 x i1> %active)
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

declare <4 x i32> @llvm.masked.load.v4i32.p0(ptr, i32, <4 x i1>, <4 x i32>)
declare void @llvm.masked.store.v4f64.p0(<4 x double>, ptr, i32, <4 x i1>)
declare void @llvm.masked.store.v4i32.p0(<4 x i32>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
