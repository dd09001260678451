package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.internal.memory.NodeMemory;
import io.netty.buffer.ByteBuf;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import org.junit.jupiter.api.Test;

/**
 * Lock-free pinning against the evictor and checkpoints: writers change blocks under per-block
 * locks (as trees do), readers check them, a checkpointer marks and writes images, and a budget of
 * a tenth of the blocks (less than the hot ones) keeps the evictor busy. Every block is a run of equal 8-byte words holding
 * its change count, so a torn copy (an image taken while a writer was half-way) or a lost change
 * (a dirty entry dropped or marked clean) shows, and so does a checkpoint image of any other state
 * than the block's when the checkpoint began.
 */
class NodeCacheConcurrencyTest {
    private static final int BLOCKS = 1000;
    /** Large enough that the budget spans a few of the pool's 512 KiB chunks. */
    private static final int BLOCK_BYTES = 16 << 10;
    private static final int WORDS = BLOCK_BYTES / 8;

    @Test
    void pinsEvictionsAndCheckpointsKeepEveryChange() throws Exception {
        NodeMemory memory = new NodeMemory();
        Store store = new Store(memory);
        for (long b = 0; b < BLOCKS; b++) {
            store.images.put(b, new byte[BLOCK_BYTES]);
        }
        NodeCache cache = new NodeCache(store, memory, (long) BLOCKS / 10 * BLOCK_BYTES);
        EntryLoader<Counter> loader = (b, data) -> new Counter(b, data, memory);
        ReentrantReadWriteLock[] locks = new ReentrantReadWriteLock[BLOCKS];
        for (int b = 0; b < BLOCKS; b++) {
            locks[b] = new ReentrantReadWriteLock();
        }
        AtomicLongArray changes = new AtomicLongArray(BLOCKS);
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        AtomicBoolean stop = new AtomicBoolean();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            long seed = t;
            threads.add(new Thread(() -> {
                Random rnd = new Random(seed);
                for (int op = 0; op < 20_000 && failures.isEmpty(); op++) {
                    int b = skewed(rnd);
                    locks[b].writeLock().lock();
                    try {
                        Counter c = cache.pin(b, Counter.class, loader);
                        c.increment();
                        cache.unpin(c, true);
                        changes.incrementAndGet(b);
                    } catch (Throwable e) {
                        failures.add(e);
                    } finally {
                        locks[b].writeLock().unlock();
                    }
                }
            }, "writer-" + t));
        }
        for (int t = 0; t < 2; t++) {
            long seed = 100 + t;
            threads.add(new Thread(() -> {
                Random rnd = new Random(seed);
                while (!stop.get() && failures.isEmpty()) {
                    int b = skewed(rnd);
                    locks[b].readLock().lock();
                    try {
                        Counter c = cache.pin(b, Counter.class, loader);
                        try {
                            c.check("read");
                        } finally {
                            cache.unpin(c, false);
                        }
                    } catch (Throwable e) {
                        failures.add(e);
                    } finally {
                        locks[b].readLock().unlock();
                    }
                }
            }, "reader-" + t));
        }
        Thread checkpointer = new Thread(() -> {
            while (!stop.get() && failures.isEmpty()) {
                try {
                    long[] atBegin = new long[BLOCKS];
                    for (ReentrantReadWriteLock l : locks) {
                        l.writeLock().lock();
                    }
                    try {
                        cache.beginCheckpoint(store.checkpointImages::clear);
                        for (int b = 0; b < BLOCKS; b++) {
                            atBegin[b] = changes.get(b);
                        }
                    } finally {
                        for (ReentrantReadWriteLock l : locks) {
                            l.writeLock().unlock();
                        }
                    }
                    cache.writeCheckpointImages();
                    store.checkpointImages.forEach((b, count) -> assertEquals(atBegin[(int) (long) b], count,
                            "checkpoint image of block " + b + " is its state when the checkpoint began"));
                } catch (Throwable e) {
                    failures.add(e);
                }
            }
        }, "checkpointer");
        for (Thread t : threads) {
            t.start();
        }
        checkpointer.start();
        for (Thread t : threads.subList(0, 4)) {
            t.join();
        }
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        checkpointer.join();
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.size() + " failures, first: " + failures.get(0), failures.get(0));
        }
        assertTrue(cache.stats().evictions() > 0, "the budget made the evictor work");
        for (int b = 0; b < BLOCKS; b++) {
            Counter c = cache.pin(b, Counter.class, loader);
            try {
                assertEquals(changes.get(b), c.value(), "changes of block " + b);
            } finally {
                cache.unpin(c, false);
            }
        }
        cache.releaseAll();
        assertEquals(0, memory.used(), "every entry's memory went back");
        assertTrue(store.tornImages == 0, store.tornImages + " torn images were written");
    }

    /**
     * A block number, mostly among the first hundred or so: blocks the evictor picks are then often
     * pinned again while it writes them, which is the race this test is after.
     */
    private static int skewed(Random rnd) {
        return (int) Math.min(BLOCKS - 1, Math.abs(rnd.nextGaussian()) * 80);
    }

    /** A block of equal words: the number of changes made to it. */
    static final class Counter extends CacheEntry {
        private final NodeMemory memory;
        private ByteBuf words;

        Counter(long blockNumber, ByteBuf data, NodeMemory memory) {
            super(blockNumber);
            this.memory = memory;
            this.words = data;
            check("load");
        }

        long value() {
            return words.getLong(0);
        }

        void increment() {
            long next = value() + 1;
            for (int i = 0; i < WORDS; i++) {
                words.setLong(i * 8, next);
            }
        }

        void check(String when) {
            long first = words.getLong(0);
            for (int i = 1; i < WORDS; i++) {
                if (words.getLong(i * 8) != first) {
                    throw new AssertionError("block " + blockNumber() + " torn at " + when);
                }
            }
        }

        @Override
        public BlockCompressor compressor() {
            return null;
        }

        @Override
        public long memoryBytes() {
            return words.capacity();
        }

        @Override
        public int serializedSizeBound() {
            return BLOCK_BYTES;
        }

        /** Word by word, yielding now and then, so that a writer let in too early would tear the copy. */
        @Override
        public void serialize(ByteBuf out) {
            for (int i = 0; i < WORDS; i++) {
                out.writeLong(words.getLong(i * 8));
                if (i % 256 == 255) {
                    Thread.yield();
                }
            }
        }

        @Override
        protected void releaseMemory() {
            memory.release(words);
            words = null;
        }
    }

    /**
     * Block images in a map; counts images whose words differ (taken while a writer was at work).
     * Counts only grow, so of two images of a block the one with the larger count is the newer: it
     * stays current whichever order write-backs and checkpoint images arrive in.
     */
    static final class Store implements BackingStore {
        final ConcurrentHashMap<Long, byte[]> images = new ConcurrentHashMap<>();
        /** The count in each image written for the checkpoint in progress. */
        final ConcurrentHashMap<Long, Long> checkpointImages = new ConcurrentHashMap<>();
        final NodeMemory memory;
        volatile int tornImages;

        Store(NodeMemory memory) {
            this.memory = memory;
        }

        @Override
        public ByteBuf fetch(long blockNumber) {
            byte[] image = images.get(blockNumber);
            ByteBuf buf = memory.allocate(BLOCK_BYTES);
            buf.writeBytes(image);
            return buf;
        }

        @Override
        public void writeBack(long blockNumber, ByteBuf image, BlockCompressor codec) {
            byte[] bytes = new byte[image.readableBytes()];
            image.getBytes(image.readerIndex(), bytes);
            for (int i = 8; i < bytes.length; i++) {
                if (bytes[i] != bytes[i % 8]) {
                    synchronized (this) {
                        tornImages++;
                    }
                    break;
                }
            }
            images.merge(blockNumber, bytes, (old, now) -> count(now) >= count(old) ? now : old);
        }

        static long count(ByteBuf image) {
            return image.getLong(image.readerIndex());
        }

        static long count(byte[] image) {
            long v = 0;
            for (int i = 0; i < 8; i++) {
                v = v << 8 | (image[i] & 0xff);
            }
            return v;
        }

        @Override
        public boolean writeCheckpointImage(long blockNumber, ByteBuf image, BlockCompressor codec) {
            Long previous = checkpointImages.put(blockNumber, count(image));
            if (previous != null) {
                throw new AssertionError("block " + blockNumber + " got two images for one checkpoint");
            }
            writeBack(blockNumber, image, codec); // one version per block: every image is current
            return true;
        }

        @Override
        public String name() {
            return "test";
        }
    }
}
