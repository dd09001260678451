package io.betree.internal.tree;

import io.betree.internal.cache.BackingStore;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;

/**
 * A backing store that records every block fetched through it: its number, its payload's tag,
 * and whether the fetch returned a part of the block (exactly the bytes a
 * {@link #fetchPrefix} asked for) rather than all of it; and, apart, every range read
 * ({@link #fetchRange}: a leaf's chunk maps, a basement's chunk). Thread-safe: reads and flushes fetch on
 * several threads.
 */
final class RecordingBacking extends ForwardingBackingStore {
    /** One fetch. */
    record Fetch(long block, byte tag, boolean part) {
    }

    private final List<Fetch> fetched = new ArrayList<>();
    private final List<Long> ranges = new ArrayList<>();

    RecordingBacking(BackingStore real) {
        super(real);
    }

    @Override
    public ByteBuf fetch(long blockNumber) {
        return recorded(blockNumber, super.fetch(blockNumber), false);
    }

    @Override
    public ByteBuf fetchPrefix(long blockNumber, int bytes) {
        ByteBuf data = super.fetchPrefix(blockNumber, bytes);
        return recorded(blockNumber, data, data.readableBytes() == bytes);
    }

    @Override
    public ByteBuf fetchRange(long blockNumber, int from, int length) {
        synchronized (fetched) {
            ranges.add(blockNumber);
        }
        return super.fetchRange(blockNumber, from, length);
    }

    /** The blocks of the range reads so far, oldest first. */
    List<Long> ranges() {
        synchronized (fetched) {
            return new ArrayList<>(ranges);
        }
    }

    private ByteBuf recorded(long blockNumber, ByteBuf data, boolean part) {
        synchronized (fetched) {
            fetched.add(new Fetch(blockNumber, data.getByte(data.readerIndex()), part));
        }
        return data;
    }

    /** The fetches so far, oldest first. */
    List<Fetch> fetched() {
        synchronized (fetched) {
            return new ArrayList<>(fetched);
        }
    }

    /** Forgets the fetches so far. */
    void clear() {
        synchronized (fetched) {
            fetched.clear();
            ranges.clear();
        }
    }

    /** How many fetches of blocks tagged {@code tag} returned a part ({@code part}) or the whole block. */
    int count(byte tag, boolean part) {
        return (int) fetched().stream().filter(f -> f.tag() == tag && f.part() == part).count();
    }

    @Override
    public String toString() {
        return fetched().size() + " fetches";
    }
}
