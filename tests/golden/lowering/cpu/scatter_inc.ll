; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_scatter_inc(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
entry:
  %buf.p0 = getelementptr inbounds ptr, ptr %buffers, i64 0
  %buf0 = load ptr, ptr %buf.p0, align 8
  %buf.p1 = getelementptr inbounds ptr, ptr %buffers, i64 1
  %buf1 = load ptr, ptr %buf.p1, align 8
  %buf.p2 = getelementptr inbounds ptr, ptr %buffers, i64 2
  %buf2 = load ptr, ptr %buf.p2, align 8
  %end.v.ins = insertelement <4 x i64> poison, i64 %end, i64 0
  %end.v = shufflevector <4 x i64> %end.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lit0.ins = insertelement <4 x i1> poison, i1 false, i64 0
  %lit0 = shufflevector <4 x i1> %lit0.ins, <4 x i1> poison, <4 x i32> zeroinitializer
  %lit2.ins = insertelement <4 x i32> poison, i32 0, i64 0
  %lit2 = shufflevector <4 x i32> %lit2.ins, <4 x i32> poison, <4 x i32> zeroinitializer
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
  %stream = icmp ne i64 %stream.flag, 0
  br label %loop
loop:
  %i = phi i64 [ %start, %entry ], [ %i.next, %latch ]
  %i.v.ins = insertelement <4 x i64> poison, i64 %i, i64 0
  %i.v = shufflevector <4 x i64> %i.v.ins, <4 x i64> poison, <4 x i32> zeroinitializer
  %lane = add <4 x i64> %i.v, <i64 0, i64 1, i64 2, i64 3>
  %active = icmp ult <4 x i64> %lane, %end.v
  %i.next = add i64 %i, 4
  %t0 = getelementptr inbounds i8, ptr %buf1, i64 %i
  %t1 = call <4 x i8> @llvm.masked.load.v4i8.p0(ptr %t0, i32 1, <4 x i1> %active, <4 x i8> poison)
  %in3.b = icmp ne <4 x i8> %t1, zeroinitializer
  %t2 = zext <4 x i32> %lit2 to <4 x i64>
  %t3 = and <4 x i1> %active, %in3.b
  %t4 = icmp ugt <4 x i32> %lit2, %s4.last
  %t5 = or <4 x i1> %t4, %s4.empty
  %t6 = xor <4 x i1> %t5, <i1 true, i1 true, i1 true, i1 true>
  %t7 = and <4 x i1> %t3, %t6
  %t8 = bitcast <4 x i1> %t7 to i4
  %t9 = zext i4 %t8 to i64
  br label %s4.head
s4.head:
  %s4.m = phi i64 [ %t9, %loop ], [ %s4.mnext, %s4.next ]
  %s4.acc = phi <4 x i32> [ zeroinitializer, %loop ], [ %s4.accnext, %s4.next ]
  %s4.none = icmp eq i64 %s4.m, 0
  br i1 %s4.none, label %s4.done, label %s4.lane
s4.lane:
  %t10 = call i64 @llvm.cttz.i64(i64 %s4.m, i1 true)
  %t11 = extractelement <4 x i64> %t2, i64 %t10
  %t12 = sub i64 %s4.m, 1
  %s4.mnext = and i64 %s4.m, %t12
  %t13 = getelementptr i32, ptr %buf0, i64 %t11
  %t14 = atomicrmw add ptr %t13, i32 1 monotonic, align 4
  br label %s4.next
s4.next:
  %s4.accnext = insertelement <4 x i32> %s4.acc, i32 %t14, i64 %t10
  br label %s4.head
s4.done:
  %t15 = getelementptr inbounds i32, ptr %buf2, i64 %i
  %full = icmp ule i64 %i.next, %end
  %streaming = and i1 %full, %stream
  br i1 %streaming, label %store.stream, label %store.masked
store.stream:
  store <4 x i32> %s4.acc, ptr %t15, align 16, !nontemporal !0
  br label %latch
store.masked:
  call void @llvm.masked.store.v4i32.p0(<4 x i32> %s4.acc, ptr %t15, i32 4, <4 x i1> %active)
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

declare <4 x i8> @llvm.masked.load.v4i8.p0(ptr, i32, <4 x i1>, <4 x i8>)
declare i64 @llvm.cttz.i64(i64, i1)
declare void @llvm.masked.store.v4i32.p0(<4 x i32>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
