//! The tuning table and its overrides: every provider's launch facts pass
//! `check_launch` for every element type, a tile stream's dynamic shared
//! memory follows its tile, and overrides that would break a kernel are
//! refused.

use manifest::provider::{check_launch, launch_facts, stream_shared_bytes, Tuning};
use manifest::{GridPolicy, Provider, Scalar, Signature, Stage, ELEMENT_SCALARS};

fn signature(provider: Provider, t: Scalar) -> Signature {
    provider.shape().signature(t, t)
}

#[test]
fn every_provider_and_type_has_launch_facts_that_check() {
    let mut checked = 0;
    for provider in Provider::ALL {
        for t in ELEMENT_SCALARS {
            let sig = signature(provider, t);
            let stages: &[Stage] = if provider == Provider::SortBy {
                &[Stage::BlockSort, Stage::Partition, Stage::Merge]
            } else {
                &[Stage::Main]
            };
            for &stage in stages {
                let facts = launch_facts(provider, stage, &sig);
                check_launch(provider, &sig, &facts)
                    .unwrap_or_else(|e| panic!("{provider:?} {t:?} {stage:?}: {e}"));
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 7 * 10 + 3 * 10);
}

#[test]
fn scans_and_select_are_tile_streams_with_three_tiles_and_a_lookback_warp() {
    for provider in [
        Provider::InclusiveScan,
        Provider::ExclusiveScan,
        Provider::Select,
    ] {
        for t in ELEMENT_SCALARS {
            let sig = signature(provider, t);
            let facts = launch_facts(provider, Stage::Main, &sig);
            assert_eq!(facts.grid, GridPolicy::ResidentTiles);
            let tile_bytes = facts.tile() as u32 * t.size() as u32;
            assert!(facts.dynamic_shared_bytes >= 3 * tile_bytes, "{t:?}");
            assert_eq!(facts.extra_warps, 1, "{t:?}");
            assert_eq!(facts.threads(), facts.block_size + 32, "{t:?}");
            assert_eq!(
                facts.dynamic_shared_bytes,
                stream_shared_bytes(
                    provider,
                    facts.block_size,
                    facts.items_per_thread,
                    t.size() as u32
                )
            );
        }
    }
    // 256 threads x 31 i32: three 31,744-byte buffers, three prefixes per
    // thread, the warps' values and the slots'.
    let i32_scan = launch_facts(
        Provider::InclusiveScan,
        Stage::Main,
        &Signature::fold(Scalar::I32),
    );
    assert_eq!(
        i32_scan.dynamic_shared_bytes,
        3 * 31_744 + 3 * 256 * 4 + 8 * 8 + 64
    );
    assert_eq!(i32_scan.threads(), 288);
    // Select's tiles of 17 f64: three 34,816-byte buffers, flags and a
    // position per thread for each, the warps' counts and the slots'.
    let f64_select = launch_facts(
        Provider::Select,
        Stage::Main,
        &signature(Provider::Select, Scalar::F64),
    );
    assert_eq!(
        f64_select.dynamic_shared_bytes,
        3 * 34_816 + 3 * 256 * 8 + 8 * 4 + 64
    );
    // Any other provider runs no look-back warp, and a stream needs its one.
    let sum = Signature::fold(Scalar::I32);
    let mut odd = launch_facts(Provider::Reduce, Stage::Main, &sum);
    odd.extra_warps = 1;
    assert!(check_launch(Provider::Reduce, &sum, &odd)
        .unwrap_err()
        .contains("only a scan or select runs any"));
    let mut lone = f64_select;
    lone.extra_warps = 0;
    assert!(check_launch(
        Provider::Select,
        &signature(Provider::Select, Scalar::F64),
        &lone
    )
    .unwrap_err()
    .contains("a scan or select runs exactly one"));
}

#[test]
fn a_tuned_scan_tile_takes_its_shared_memory_along() {
    let sig = Signature::fold(Scalar::F64);
    let base = launch_facts(Provider::ExclusiveScan, Stage::Main, &sig);
    let tuned = Tuning::parse("scan@8.items=23,scan@8.min_blocks=2")
        .unwrap()
        .apply(base, Provider::ExclusiveScan, &sig);
    assert_eq!(tuned.items_per_thread, 23);
    assert_eq!(tuned.min_blocks_per_sm, 2);
    assert_eq!(
        tuned.dynamic_shared_bytes,
        stream_shared_bytes(Provider::ExclusiveScan, 256, 23, 8)
    );
    // Select's buffers follow its tile too, by its own storage.
    let pred = signature(Provider::Select, Scalar::F64);
    let select = Tuning::parse("select@8.items=11").unwrap().apply(
        launch_facts(Provider::Select, Stage::Main, &pred),
        Provider::Select,
        &pred,
    );
    assert_eq!(
        select.dynamic_shared_bytes,
        stream_shared_bytes(Provider::Select, 256, 11, 8)
    );
    check_launch(Provider::Select, &pred, &select).unwrap();
    check_launch(Provider::ExclusiveScan, &sig, &tuned).unwrap();
    // Another size's entry leaves it alone.
    let other =
        Tuning::parse("scan@4.items=23")
            .unwrap()
            .apply(base, Provider::ExclusiveScan, &sig);
    assert_eq!(other, base);
}

#[test]
fn launch_facts_that_would_break_a_kernel_are_refused() {
    let pred = signature(Provider::Select, Scalar::I64);
    let select = launch_facts(Provider::Select, Stage::Main, &pred);
    // A stream takes any grid: its blocks draw the tiles.
    let capped =
        Tuning::parse("select.blocks_per_sm=1")
            .unwrap()
            .apply(select, Provider::Select, &pred);
    check_launch(Provider::Select, &pred, &capped).unwrap();
    let mut short = select;
    short.dynamic_shared_bytes -= 1;
    assert_eq!(
        check_launch(Provider::Select, &pred, &short).unwrap_err(),
        format!(
            "dynamic_shared_bytes {}: the tile stream of select needs {} (three tiles)",
            short.dynamic_shared_bytes, select.dynamic_shared_bytes
        )
    );
    let wide = Tuning::parse("select.items=33")
        .unwrap()
        .apply(select, Provider::Select, &pred);
    assert!(check_launch(Provider::Select, &pred, &wide)
        .unwrap_err()
        .contains("one flag bit per item, at most 32"));

    let fold = Signature::fold(Scalar::I32);
    let mut scan = launch_facts(Provider::InclusiveScan, Stage::Main, &fold);
    scan.dynamic_shared_bytes -= 1;
    assert_eq!(
        check_launch(Provider::InclusiveScan, &fold, &scan).unwrap_err(),
        format!(
            "dynamic_shared_bytes {}: the tile stream of inclusive_scan needs {} (three tiles)",
            scan.dynamic_shared_bytes,
            scan.dynamic_shared_bytes + 1
        )
    );
    scan.dynamic_shared_bytes = 300_000;
    assert!(check_launch(Provider::InclusiveScan, &fold, &scan)
        .unwrap_err()
        .contains("exceeds sm_90's 232448 a block"));
}

#[test]
fn tuning_text_errors_are_located() {
    for (text, why) in [
        ("scan.items", "RMIR_TUNING entry `scan.items`: no `=`"),
        ("scan=3", "RMIR_TUNING entry `scan=3`: no `.KEY`"),
        ("scan@3.items=4", "RMIR_TUNING entry `scan@3.items=4`: the size is not 1, 2, 4 or 8"),
        ("sort.items=4", "RMIR_TUNING entry `sort.items=4`: the family is one of reduce, scan, select, transform, segmented_reduce"),
        ("scan.depth=4", "RMIR_TUNING entry `scan.depth=4`: the key is one of block, items, min_blocks, blocks_per_sm"),
        ("scan.items=x", "RMIR_TUNING entry `scan.items=x`: the value is not a number"),
    ] {
        assert_eq!(Tuning::parse(text).unwrap_err(), why);
    }
    assert_eq!(Tuning::parse(" , ").unwrap(), Tuning::default());
}
