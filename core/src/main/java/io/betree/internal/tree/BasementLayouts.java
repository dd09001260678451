package io.betree.internal.tree;

import java.util.concurrent.ConcurrentHashMap;

/**
 * The layouts basements of one tree were stored with, held from the moment a basement is
 * serialized until its leaf is next serialized and records them ({@link LeafNode}). A basement
 * is often written after its leaf (each is written back on its own), and would otherwise leave
 * the leaf with the layout of a version that no longer exists. A read may use a layout held here
 * before its leaf has it.
 *
 * <p>Bounded: past {@link #LIMIT} layouts a new one is dropped, and its leaf keeps the older
 * layout until a read of the basement teaches it the new one. Thread-safe.
 */
final class BasementLayouts {
    /** About 1 KiB of heap each, at most. */
    static final int LIMIT = 4096;

    private final ConcurrentHashMap<Long, SegmentLayout> layouts = new ConcurrentHashMap<>();

    /** Records that basement {@code block} was just serialized with {@code layout}. */
    void stored(long block, SegmentLayout layout) {
        if (layouts.size() < LIMIT || layouts.containsKey(block)) {
            layouts.put(block, layout);
        }
    }

    /** The layout held for {@code block}, or null; it stays held. */
    SegmentLayout peek(long block) {
        return layouts.get(block);
    }

    /** The layout held for {@code block}, or null; it is no longer held. */
    SegmentLayout take(long block) {
        return layouts.remove(block);
    }

    /** Drops what is held for a basement block that was freed. */
    void forget(long block) {
        layouts.remove(block);
    }
}
