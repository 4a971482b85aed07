//! The tuning table and its overrides: every provider's launch facts pass
//! `check_launch` for every element type, a tile stream's dynamic shared
//! memory follows its tile, and overrides that would break a kernel are
//! refused.

use manifest::provider::{
    check_launch, launch_facts, stream_shared_bytes, tile_stream_bytes, Tuning,
};
use manifest::{GridPolicy, Provider, Scalar, Shape, Signature, Stage, ELEMENT_SCALARS};

fn signature(provider: Provider, t: Scalar) -> Signature {
    provider.shape().signature(t, t)
}

#[test]
fn every_provider_and_type_has_launch_facts_that_check() {
    let mut checked = 0;
    for provider in Provider::ALL {
        for t in ELEMENT_SCALARS {
            let sig = signature(provider, t);
            for &stage in manifest::stages(provider) {
                let facts = launch_facts(provider, stage, &sig);
                check_launch(provider, &sig, &facts)
                    .unwrap_or_else(|e| panic!("{provider:?} {t:?} {stage:?}: {e}"));
                checked += 1;
            }
        }
    }
    // 14 providers of one kernel, the sort's three, the segmented sort's
    // six, the merge's two, the by-keys' two each.
    assert_eq!(checked, 14 * 10 + 3 * 10 + 6 * 10 + 2 * 10 + 2 * 2 * 10);
}

#[test]
fn by_keys_take_cubs_policy_for_a_users_functor() {
    use manifest::{Element, Field, Layout};
    let facts = |p: Provider, k: Element, v: Element| {
        let f = launch_facts(p, Stage::Main, &Shape::ByKey.signature(k, v));
        (f.block_size, f.items_per_thread)
    };
    let s = |s: Scalar| Element::Scalar(s);
    // Keys and values of up to 8 bytes each: CUB's nominal items.
    for (k, v) in [(Scalar::U8, Scalar::F64), (Scalar::I64, Scalar::I64)] {
        assert_eq!(facts(Provider::ReduceByKey, s(k), s(v)), (128, 6));
        assert_eq!(facts(Provider::ScanByKey, s(k), s(v)), (256, 9));
    }
    // A 24-byte value with 8-byte keys: ceil(6 * 8 / 32) and 9 * 8 / 32.
    let wide = Element::Composite(Layout {
        name: "(f64, f64, f64)".into(),
        size: 24,
        align: 8,
        fields: (0..3)
            .map(|i| Field {
                name: i.to_string(),
                offset: 8 * i as u64,
                element: s(Scalar::F64),
            })
            .collect(),
    });
    assert_eq!(
        facts(Provider::ReduceByKey, s(Scalar::U64), wide.clone()),
        (128, 2)
    );
    assert_eq!(
        facts(Provider::ScanByKey, s(Scalar::U64), wide.clone()),
        (256, 2)
    );
    // The init kernels: a thread a tile.
    let init = launch_facts(
        Provider::ScanByKey,
        Stage::Init,
        &Shape::ByKey.signature(Scalar::U64, wide),
    );
    assert_eq!(
        (init.block_size, init.items_per_thread, init.grid),
        (128, 1, GridPolicy::ThreadPerPartition)
    );
}

#[test]
fn chains_are_tuned_as_reduces_of_their_input() {
    // (i8) -> f64: the input's 16-byte vectors set the loads, not the value's.
    let sig = Shape::Chain.signature(Scalar::I8, Scalar::F64);
    let reduce = launch_facts(Provider::Reduce, Stage::Main, &Signature::fold(Scalar::I8));
    for provider in [Provider::ChainReduce, Provider::ChainPick] {
        let facts = launch_facts(provider, Stage::Main, &sig);
        assert_eq!(facts, reduce);
        assert_eq!(facts.items_per_thread, 64);
        let tuned = Tuning::parse("chain@1.items=32,chain@8.items=8,chain.blocks_per_sm=4")
            .unwrap()
            .apply(facts, provider, &sig);
        assert_eq!(tuned.items_per_thread, 32);
        assert_eq!(
            tuned.grid,
            GridPolicy::TilesCappedBySms { blocks_per_sm: 4 }
        );
        check_launch(provider, &sig, &tuned).unwrap();
        // A reduce's override is not a chain's.
        let other = Tuning::parse("reduce.items=32")
            .unwrap()
            .apply(facts, provider, &sig);
        assert_eq!(other, facts);
        let odd = Tuning::parse("chain.items=24")
            .unwrap()
            .apply(facts, provider, &sig);
        assert_eq!(
            check_launch(provider, &sig, &odd).unwrap_err(),
            "items_per_thread 24 is not a whole number of 16-byte vectors of i8 (16 elements)"
        );
    }
}

#[test]
fn scans_select_and_collect_are_tile_streams_with_three_tiles_and_a_lookback_warp() {
    for provider in [
        Provider::InclusiveScan,
        Provider::ExclusiveScan,
        Provider::Select,
        Provider::ChainCollect,
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
        .contains("only a scan, select or chain_collect runs any"));
    let mut lone = f64_select;
    lone.extra_warps = 0;
    assert!(check_launch(
        Provider::Select,
        &signature(Provider::Select, Scalar::F64),
        &lone
    )
    .unwrap_err()
    .contains("a scan, select or chain_collect runs exactly one"));
}

#[test]
fn a_chain_collect_runs_selects_tile_stream_by_its_input() {
    use Scalar::*;
    // Select's tile (by T's size: 17 items of 8 bytes, else the scans'),
    // select's grid and occupancy; its storage is the three tiles alone
    // (the compaction happens in the tile's own slot), whatever R is.
    for (t, r) in [
        (F32, F64),
        (U8, U32),
        (I64, I8),
        (F32, Bool),
        (U64, U8),
        (I8, F64),
    ] {
        let sig = Shape::Chain.signature(t, r);
        let facts = launch_facts(Provider::ChainCollect, Stage::Main, &sig);
        let select = launch_facts(
            Provider::Select,
            Stage::Main,
            &signature(Provider::Select, t),
        );
        assert_eq!(
            (facts.block_size, facts.items_per_thread, facts.grid),
            (select.block_size, select.items_per_thread, select.grid),
            "{sig}"
        );
        assert_eq!(facts.min_blocks_per_sm, select.min_blocks_per_sm, "{sig}");
        assert_eq!(facts.threads(), 288, "{sig}");
        let tile_bytes = facts.tile() as u32 * t.size() as u32;
        assert_eq!(
            facts.dynamic_shared_bytes,
            3 * tile_bytes.div_ceil(16) * 16 + 8 * 4 + 64,
            "{sig}"
        );
        check_launch(Provider::ChainCollect, &sig, &facts).unwrap();
    }
    // f32 -> f64: 31 items, three 31,744-byte tiles (values of f64 would
    // have needed twice as much).
    let widening = Shape::Chain.signature(F32, F64);
    let facts = launch_facts(Provider::ChainCollect, Stage::Main, &widening);
    assert_eq!(facts.items_per_thread, 31);
    assert_eq!(facts.dynamic_shared_bytes, 3 * 31_744 + 8 * 4 + 64);
    assert_eq!(
        launch_facts(
            Provider::ChainCollect,
            Stage::Main,
            &Shape::Chain.signature(F64, U8)
        )
        .items_per_thread,
        17
    );
    // An indexed chain (`enumerate`) whose values are wider than its
    // elements keeps each kept element's position, two bytes an item of
    // each tile: f32 -> usize indices; one as wide (u64 -> usize), or the
    // same chain unindexed, does not.
    let indices = Signature::indexed_chain(F32, Usize);
    let positions = launch_facts(Provider::ChainCollect, Stage::Main, &indices);
    assert_eq!(positions.items_per_thread, 31);
    assert_eq!(
        positions.dynamic_shared_bytes,
        3 * 31_744 + 3 * 15_872 + 8 * 4 + 64
    );
    assert_eq!(
        positions.dynamic_shared_bytes,
        tile_stream_bytes(Provider::ChainCollect, &indices, 256, 31)
    );
    check_launch(Provider::ChainCollect, &indices, &positions).unwrap();
    let mut short = positions;
    short.dynamic_shared_bytes = stream_shared_bytes(Provider::ChainCollect, 256, 31, 4);
    assert!(check_launch(Provider::ChainCollect, &indices, &short)
        .unwrap_err()
        .contains("the tile stream of chain_collect needs"));
    for same in [
        Signature::indexed_chain(U64, Usize),
        Shape::Chain.signature(F32, U64),
    ] {
        assert_eq!(
            tile_stream_bytes(Provider::ChainCollect, &same, 256, 17),
            stream_shared_bytes(
                Provider::ChainCollect,
                256,
                17,
                same.element().size() as u32
            ),
            "{same}"
        );
    }
    // The positions are the collect's alone: a pick keeps none.
    assert_eq!(
        tile_stream_bytes(Provider::ChainPick, &indices, 256, 31),
        stream_shared_bytes(Provider::ChainPick, 256, 31, 4)
    );

    // Its own tuning family, by the input's size; select's leaves it alone.
    let tuned = Tuning::parse("chain_collect@4.items=15,chain_collect@8.items=9")
        .unwrap()
        .apply(facts, Provider::ChainCollect, &widening);
    assert_eq!(tuned.items_per_thread, 15);
    assert_eq!(
        tuned.dynamic_shared_bytes,
        stream_shared_bytes(Provider::ChainCollect, 256, 15, 4)
    );
    check_launch(Provider::ChainCollect, &widening, &tuned).unwrap();
    for other in [
        "select.items=15",
        "chain.items=16",
        "chain_collect@8.items=9",
    ] {
        let untouched =
            Tuning::parse(other)
                .unwrap()
                .apply(facts, Provider::ChainCollect, &widening);
        assert_eq!(untouched, facts, "{other}");
    }
    let wide = Tuning::parse("chain_collect.items=33").unwrap().apply(
        facts,
        Provider::ChainCollect,
        &widening,
    );
    assert_eq!(
        check_launch(Provider::ChainCollect, &widening, &wide).unwrap_err(),
        "items_per_thread 33: chain_collect keeps one flag bit per item, at most 32"
    );
    let mut short = facts;
    short.dynamic_shared_bytes -= 1;
    assert!(check_launch(Provider::ChainCollect, &widening, &short)
        .unwrap_err()
        .contains("the tile stream of chain_collect needs"));
    let mut lone = facts;
    lone.extra_warps = 0;
    assert!(check_launch(Provider::ChainCollect, &widening, &lone)
        .unwrap_err()
        .contains("runs exactly one"));
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
        ("sort.items=4", "RMIR_TUNING entry `sort.items=4`: the family is one of reduce, scan, select, transform, segmented_reduce, histogram, partition_point, chain, chain_collect"),
        ("scan.depth=4", "RMIR_TUNING entry `scan.depth=4`: the key is one of block, items, min_blocks, blocks_per_sm"),
        ("scan.items=x", "RMIR_TUNING entry `scan.items=x`: the value is not a number"),
    ] {
        assert_eq!(Tuning::parse(text).unwrap_err(), why);
    }
    assert_eq!(Tuning::parse(" , ").unwrap(), Tuning::default());
}
