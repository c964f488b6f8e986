; kiln kernel, cpu, 4 lanes
define void @kiln_kernel_symbolic_loop(i64 %start, i64 %end, ptr noalias nocapture readonly %buffers, ptr noalias nocapture readonly %sizes, ptr noalias nocapture readonly %params, ptr %check, i64 %stream.flag) #0 {
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
  %lit3.ins = insertelement <4 x i32> poison, i32 0, i64 0
  %lit3 = shufflevector <4 x i32> %lit3.ins, <4 x i32> poison, <4 x i32> zeroinitializer
  %lit4.ins = insertelement <4 x i32> poison, i32 1, i64 0
  %lit4 = shufflevector <4 x i32> %lit4.ins, <4 x i32> poison, <4 x i32> zeroinitializer
  %lit5.bits = bitcast i32 1073741824 to float
  %lit5.ins = insertelement <4 x float> poison, float %lit5.bits, i64 0
  %lit5 = shufflevector <4 x float> %lit5.ins, <4 x float> poison, <4 x i32> zeroinitializer
  %interrupt.p = getelementptr inbounds ptr, ptr %check, i64 1
  %interrupt = load ptr, ptr %interrupt.p, align 8
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
  br label %L6.pre
L6.pre:
  br label %L6.head
L6.head:
  %L6.mask = phi <4 x i1> [ %active, %L6.pre ], [ %L6.active, %L6.latch ]
  %s7 = phi <4 x i32> [ %lit3, %L6.pre ], [ %s7.next, %L6.latch ]
  %s8 = phi <4 x float> [ %t1, %L6.pre ], [ %s8.next, %L6.latch ]
  %t4 = icmp ult <4 x i32> %s7, %t3
  %L6.active = and <4 x i1> %L6.mask, %t4
  %t5 = call i1 @llvm.vector.reduce.or.v4i1(<4 x i1> %L6.active)
  br i1 %t5, label %L6.body, label %L6.exit
L6.body:
  %t6 = add <4 x i32> %s7, %lit4
  %s7.next = select <4 x i1> %L6.active, <4 x i32> %t6, <4 x i32> %s7
  %t7 = fmul <4 x float> %s8, %lit5
  %s8.next = select <4 x i1> %L6.active, <4 x float> %t7, <4 x float> %s8
  br label %L6.latch
L6.latch:
  %L6.stop = load atomic i32, ptr %interrupt monotonic, align 4
  %L6.go = icmp eq i32 %L6.stop, 0
  br i1 %L6.go, label %L6.head, label %interrupted
L6.exit:
  %t8 = getelementptr inbounds float, ptr %buf2, i64 %i
  %full = icmp ule i64 %i.next, %end
  %streaming = and i1 %full, %stream
  br i1 %streaming, label %store.stream, label %store.masked
store.stream:
  store <4 x float> %s8, ptr %t8, align 16, !nontemporal !0
  br label %latch
store.masked:
  call void @llvm.masked.store.v4f32.p0(<4 x float> %s8, ptr %t8, i32 4, <4 x i1> %active)
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
interrupted:
  ret void
}

declare <4 x float> @llvm.masked.load.v4f32.p0(ptr, i32, <4 x i1>, <4 x float>)
declare <4 x i32> @llvm.masked.load.v4i32.p0(ptr, i32, <4 x i1>, <4 x i32>)
declare i1 @llvm.vector.reduce.or.v4i1(<4 x i1>)
declare void @llvm.masked.store.v4f32.p0(<4 x float>, ptr, i32, <4 x i1>)

!0 = !{i32 1}

attributes #0 = { nounwind "min-legal-vector-width"="128" "prefer-vector-width"="128" }
