//! Special cases of the closure-layout experiment (docs/closure-layout.md),
//! each printed with what it shows. Built and run by run.sh.
use core::mem::{offset_of, size_of, size_of_val, align_of_val};
use core::ptr::addr_of;

fn off<C>(c: &C, a: usize) -> usize { a - (c as *const C as usize) }

#[allow(dead_code)] struct DeclOrder(u8, u8, u64);
#[allow(dead_code)] struct MentionOrder(u64, u8, u8);

fn main() {
    // 1. Non-move closure using scalars by value: captured by reference.
    let k: i32 = 7; let m: u8 = 3;
    let c = |x: i32| x + k + m as i32;
    println!("non-move |x| x + k + m: size {} align {} (2 refs = 16)", size_of_val(&c), align_of_val(&c));
    std::hint::black_box(c(1));
    // 1b. move closure, same body: captured by value.
    let c = move |x: i32| x + k + m as i32;
    println!("move |x| x + k + m: size {} align {}", size_of_val(&c), align_of_val(&c));
    std::hint::black_box(c(1));

    // 2. Declared a: u8, b: u8, w: u64; body mentions w, b, a.
    let a: u8 = 1; let b: u8 = 2; let w: u64 = 3;
    let c = move |o: &mut [usize; 3]| { o[0] = addr_of!(w) as usize; o[1] = addr_of!(b) as usize; o[2] = addr_of!(a) as usize; };
    let mut o = [0; 3]; c(&mut o);
    println!("mention w,b,a: w@{} b@{} a@{}; probe in mention order (u64,u8,u8): {} {} {}; in declaration order (u8,u8,u64): b@{} a@{}",
        off(&c, o[0]), off(&c, o[1]), off(&c, o[2]),
        offset_of!(MentionOrder, 0), offset_of!(MentionOrder, 1), offset_of!(MentionOrder, 2),
        offset_of!(DeclOrder, 1), offset_of!(DeclOrder, 0));

    // 2b. A capture mentioned twice: the first mention counts. `let _ = w;`
    // reads nothing, so it does not capture `w` (size 2, not 16).
    let c = move |o: &mut [usize; 3]| { o[0] = addr_of!(b) as usize; o[1] = addr_of!(a) as usize; o[2] = addr_of!(b) as usize; let _ = w; };
    let mut o = [0; 3]; c(&mut o);
    println!("mention b,a,b + `let _ = w`: b@{} a@{} size {} (w not captured)", off(&c, o[0]), off(&c, o[1]), size_of_val(&c));

    // 3. Precise captures of a tuple's fields, mentioned .1 then .0.
    let pair: (u8, u8) = (5, 6);
    let c = move |o: &mut [usize; 2]| { o[0] = addr_of!(pair.1) as usize; o[1] = addr_of!(pair.0) as usize; };
    let mut o = [0; 2]; c(&mut o);
    println!("pair.1 then pair.0: .1@{} .0@{} size {}", off(&c, o[0]), off(&c, o[1]), size_of_val(&c));
    let s = (1u8, 2u64, 3u8);
    let c = move |o: &mut [usize; 2]| { o[0] = addr_of!(s.2) as usize; o[1] = addr_of!(s.0) as usize; };
    let mut o = [0; 2]; c(&mut o);
    println!("s.2 then s.0 of (u8,u64,u8): .2@{} .0@{} size {}", off(&c, o[0]), off(&c, o[1]), size_of_val(&c));

    // 4. FnMut move closure (mutates a capture): same upvar types.
    let mut acc: u8 = 0; let big: u64 = 9;
    let mut c = move |o: &mut [usize; 2]| { acc = acc.wrapping_add(1); o[0] = addr_of!(acc) as usize; o[1] = addr_of!(big) as usize; };
    let mut o = [0; 2]; c(&mut o);
    println!("FnMut acc: u8, big: u64: acc@{} big@{} size {}", off(&c, o[0]), off(&c, o[1]), size_of_val(&c));
    let _ = acc;

    // 5. Zero captures.
    let c = move |x: u32| x + 1;
    #[allow(dead_code)] struct Z;
    println!("zero captures: size {} align {}; struct Z: {} {}", size_of_val(&c), align_of_val(&c), size_of::<Z>(), core::mem::align_of::<Z>());
    std::hint::black_box(c(1));

    // 6. A tuple probe does not reorder its last field: the reason to use a struct.
    println!("tuple (u64, u8, u32): offsets {} {} {}", offset_of!((u64, u8, u32), 0), offset_of!((u64, u8, u32), 1), offset_of!((u64, u8, u32), 2));
    #[allow(dead_code)] struct S3(u64, u8, u32);
    println!("struct S3(u64, u8, u32): offsets {} {} {}", offset_of!(S3, 0), offset_of!(S3, 1), offset_of!(S3, 2));
    let x: u64 = 1; let y: u8 = 2; let z: u32 = 3;
    let c = move |o: &mut [usize; 3]| { o[0] = addr_of!(x) as usize; o[1] = addr_of!(y) as usize; o[2] = addr_of!(z) as usize; };
    let mut o = [0; 3]; c(&mut o);
    println!("closure (u64, u8, u32): offsets {} {} {}", off(&c, o[0]), off(&c, o[1]), off(&c, o[2]));
}
