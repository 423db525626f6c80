/*
 * trampoline.S: the code the injected thread runs (internal/inject,
 * docs/attach-inject.md). The injector copies its bytes into the unused
 * tail of an executable mapping of the target and starts the thread at
 * its first byte with rsp at the frame (the F_* offsets, which
 * trampoline_amd64.go spells again) and every other register the app's.
 * The injector has written the app's registers as they must be when the
 * thread goes on into the frame's ucontext; the thread blocks its
 * signals (the old mask goes into the ucontext), saves its extended
 * state (XSAVE, sized by CPUID leaf 0xD, in the signal frame's format) and
 * errno, calls dlopen, dlsym and the function, writes the results into
 * the frame, waits a bounded time for the injector to read them, puts
 * errno back and ends with rt_sigreturn on the ucontext: registers, flags,
 * signal mask, alternate stack and extended state back at once, no
 * instruction of the trampoline run after it. No step needs the
 * injector, which only watches.
 *
 * The bytes are in trampoline_code_amd64.go; TestTrampolineIsTheSource
 * assembles this file and compares them (with RPG_INJECT_TRAMPOLINE_WRITE=1
 * it rewrites them).
 */
	.intel_syntax noprefix
	.text
	.globl rpg_trampoline

	.equ F_DLOPEN, 0
	.equ F_DLSYM, 8
	.equ F_DLERROR, 16
	.equ F_ERRNOLOC, 24
	.equ F_DLCLOSE, 32
	.equ F_LIB, 40
	.equ F_SYM, 48
	.equ F_ARG, 56
	.equ F_MODE, 64
	.equ F_BLOCK, 96
	.equ F_ERRNOPTR, 112
	.equ F_ERRNO, 120
	.equ F_HANDLE, 128
	.equ F_FN, 136
	.equ F_RET, 144
	.equ F_STATE, 152
	.equ F_WAITSET, 160
	.equ F_TIMEOUT, 168
	.equ F_UC, 256			/* struct ucontext (x86-64) */
	.equ UC_STACK, 16
	.equ UC_FPSTATE, 40 + 184	/* uc_mcontext.fpstate */
	.equ UC_SIGMASK, 296
	.equ F_ERRTEXT, 576
	.equ ERRTEXT_LEN, 512

	.equ SYS_rt_sigprocmask, 14
	.equ SYS_rt_sigreturn, 15
	.equ SYS_rt_sigtimedwait, 128
	.equ SYS_sigaltstack, 131
	.equ SIG_BLOCK, 0
	.equ EINTR, 4
	.equ STATE_CALLING, 1
	.equ STATE_DONE, 2
	.equ STATE_READ, 3
	.equ FP_XSTATE_MAGIC1, 0x46505853
	.equ FP_XSTATE_MAGIC2, 0x46505845
	.equ SW_BYTES, 464		/* struct _fpx_sw_bytes in the FXSAVE area */
	.equ XFEATURES_AMX, 0x60000	/* XTILECFG, XTILEDATA: not in a signal frame */

rpg_trampoline:
	mov r13, rsp			/* the frame */
	cld

	/* Signals wait until the end (all but the synchronous ones and
	 * glibc's SIGSETXID: F_BLOCK); the old mask is the ucontext's. */
	mov eax, SYS_rt_sigprocmask
	mov edi, SIG_BLOCK
	lea rsi, [r13 + F_BLOCK]
	lea rdx, [r13 + F_UC + UC_SIGMASK]
	mov r10d, 8
	syscall
	/* The alternate signal stack, which rt_sigreturn sets again. */
	mov eax, SYS_sigaltstack
	xor edi, edi
	lea rsi, [r13 + F_UC + UC_STACK]
	syscall

	/* The extended state in the signal frame's layout: XSAVE of the
	 * features XCR0 enables (AMX tiles aside), its size from CPUID leaf
	 * 0xD, the software bytes and the second magic word the kernel
	 * checks; FXSAVE without OSXSAVE. */
	mov eax, 1
	cpuid
	bt ecx, 27
	jnc .Lfxsave
	xor ecx, ecx
	xgetbv
	mov r14d, eax			/* r14d: the features (XCR0's low word) */
	mov r15d, edx			/* r15d: its high word */
	mov eax, 0xd
	xor ecx, ecx
	cpuid				/* ebx: the size for XCR0 */
	test r14d, XFEATURES_AMX
	jz 1f
	and r14d, ~XFEATURES_AMX
	mov eax, 0xd
	mov ecx, 17
	cpuid				/* ebx: the offset of XTILECFG */
1:
	lea rax, [rbx + 64]
	sub rsp, rax
	and rsp, -64
	mov r12, rsp
	xor eax, eax
	mov rdi, r12			/* the FXSAVE part's software bytes and the XSAVE header zero */
	add rdi, SW_BYTES
	mov ecx, (576 - SW_BYTES) / 8
	rep stosq
	mov eax, r14d
	mov edx, r15d
	xsave [r12]
	mov dword ptr [r12 + SW_BYTES], FP_XSTATE_MAGIC1
	lea eax, [rbx + 4]
	mov dword ptr [r12 + SW_BYTES + 4], eax		/* extended_size */
	mov dword ptr [r12 + SW_BYTES + 8], r14d	/* xfeatures */
	mov dword ptr [r12 + SW_BYTES + 12], r15d
	mov dword ptr [r12 + SW_BYTES + 16], ebx	/* xstate_size */
	mov dword ptr [r12 + rbx], FP_XSTATE_MAGIC2
	jmp .Lsaved
.Lfxsave:
	sub rsp, 512
	and rsp, -64
	mov r12, rsp
	fxsave [r12]
	xor eax, eax
	mov rdi, r12
	add rdi, SW_BYTES
	mov ecx, (512 - SW_BYTES) / 8
	rep stosq
.Lsaved:
	mov [r13 + F_UC + UC_FPSTATE], r12

	/* errno, in the thread's TLS. */
	mov rax, [r13 + F_ERRNOLOC]
	test rax, rax
	jz 1f
	call rax
	mov [r13 + F_ERRNOPTR], rax
	mov ecx, [rax]
	mov [r13 + F_ERRNO], rcx
1:
	mov qword ptr [r13 + F_STATE], STATE_CALLING

	/* dlopen(lib, mode), dlsym(handle, sym), sym(arg) */
	mov rdi, [r13 + F_LIB]
	mov rsi, [r13 + F_MODE]
	call [r13 + F_DLOPEN]
	mov [r13 + F_HANDLE], rax
	test rax, rax
	jz .Lfailed
	mov rdi, rax
	mov rsi, [r13 + F_SYM]
	call [r13 + F_DLSYM]
	mov [r13 + F_FN], rax
	test rax, rax
	jz .Lfailed
	mov rdi, [r13 + F_ARG]
	call rax
	mov [r13 + F_RET], rax
	jmp .Ldone

	/* A failure: dlerror()'s text copied into the frame, a library
	 * without the function closed again. */
.Lfailed:
	mov rax, [r13 + F_DLERROR]
	test rax, rax
	jz 3f
	call rax
	test rax, rax
	jz 3f
	lea rdi, [r13 + F_ERRTEXT]
	mov ecx, ERRTEXT_LEN - 1
2:
	mov dl, [rax]
	mov [rdi], dl
	test dl, dl
	jz 3f
	inc rax
	inc rdi
	dec ecx
	jnz 2b
	mov byte ptr [rdi], 0
3:
	mov rdi, [r13 + F_HANDLE]
	test rdi, rdi
	jz .Ldone
	mov rax, [r13 + F_DLCLOSE]
	test rax, rax
	jz .Ldone
	call rax

.Ldone:
	mov rax, [r13 + F_ERRNOPTR]
	test rax, rax
	jz 4f
	mov ecx, [r13 + F_ERRNO]
	mov [rax], ecx
4:
	/* The results are in the frame, which the app's stack reuses once the
	 * thread goes on: wait for the injector to read them (it sets
	 * F_STATE to STATE_READ and interrupts the wait), at most F_TIMEOUT
	 * when it is gone. rt_sigtimedwait on an empty set takes no signal
	 * and is not restarted after the interrupt. */
	mov qword ptr [r13 + F_STATE], STATE_DONE
.Lpark:
	cmp qword ptr [r13 + F_STATE], STATE_READ
	je .Lread
	mov eax, SYS_rt_sigtimedwait
	lea rdi, [r13 + F_WAITSET]
	xor esi, esi
	lea rdx, [r13 + F_TIMEOUT]
	mov r10d, 8
	syscall
	cmp rax, -EINTR
	je .Lpark
.Lread:
	/* Everything back at once; the thread goes on in the app. */
	lea rsp, [r13 + F_UC]
	mov eax, SYS_rt_sigreturn
	syscall
	ud2
	.size rpg_trampoline, . - rpg_trampoline
	.section .note.GNU-stack, "", @progbits
