package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.compression.BlockCompressor;
import io.betree.compression.Compressors;
import io.betree.internal.cache.CacheEntry;
import io.betree.internal.cache.EntryLoader;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import io.netty.buffer.ByteBuf;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write-back still being written when a checkpoint begins, over a real block file: the evictor
 * takes a block's image, a writer changes the block, the checkpoint begins (marking the block), and
 * the write of the earlier state ends after the begin, before or after the checkpoint's image of
 * the newer state. Either way a read of the block may find the earlier state, so the cache must
 * keep the block dirty and write it again rather than drop it as clean. A time-series load with 16
 * writers lost every message one internal node had taken in its last flush that way.
 */
class CheckpointWriteBackRaceTest {
    private static final int BLOCK_BYTES = 16 << 10;
    private static final BlockCompressor LZ4 = Compressors.create("lz4");

    @TempDir
    Path dir;

    @Test
    void aCheckpointImageThatIsNotTheCurrentVersionLeavesTheBlockDirty() throws Exception {
        Path path = dir.resolve("race.data");
        long block;
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path); Rig rig = new Rig(file, 1)) {
            block = rig.block;
            rig.evictorWaitsAtTheGate(); // with the image of 1
            rig.change(2);
            rig.cache.beginCheckpoint(file::beginCheckpoint);
            rig.backing.letGo.countDown(); // the image of 1 becomes the current version now
            rig.room.get(10, TimeUnit.SECONDS);
            rig.cache.writeCheckpointImages();
            file.finishCheckpoint(null);
            assertEquals(2, rig.valueAfterEviction(), "the block read back after its eviction");
        }
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path)) {
            ByteBuffer stored = file.read(block, ByteBuffer::allocate);
            assertEquals(2, stored.getLong(0), "the checkpoint holds the contents the block had at its begin");
        }
    }

    @Test
    void aWriteBackOfAnEarlierStateEndingAfterTheCheckpointImageLeavesTheBlockDirty() throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("late.data"));
                Rig rig = new Rig(file, 1)) {
            rig.evictorWaitsAtTheGate();
            rig.change(2);
            rig.cache.beginCheckpoint(file::beginCheckpoint);
            // The image of 2 becomes the current version (nothing was written since the begin)...
            rig.cache.writeCheckpointImages();
            file.finishCheckpoint(null);
            // ...until the write-back of 1 ends and replaces it.
            rig.backing.letGo.countDown();
            rig.room.get(10, TimeUnit.SECONDS);
            assertEquals(2, rig.valueAfterEviction(), "the block read back after its eviction");
        }
    }

    /**
     * A write-back of a never-written block that ends while the checkpoint begins, after the block
     * file's table snapshot: the begin marks the block in the same hold of the cache lock, so the
     * evictor keeps it and the checkpoint writes it. (With the snapshot and the marks taken apart,
     * the evictor dropped the block as clean in between, and the checkpoint named a block it had
     * never written: "block N has not been written" after a crash.)
     */
    @Test
    void aWriteBackEndingDuringTheBeginLeavesTheBlockMarked() throws Exception {
        Path path = dir.resolve("fixed.data");
        long block;
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path); Rig rig = new Rig(file, 7)) {
            block = rig.block;
            rig.evictorWaitsAtTheGate();
            rig.cache.beginCheckpoint(() -> {
                file.beginCheckpoint();
                rig.backing.letGo.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (file.blockOffset(rig.block) == 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // the write-back is installed after the snapshot
                }
            });
            rig.cache.writeCheckpointImages();
            file.finishCheckpoint(null);
            rig.room.get(10, TimeUnit.SECONDS);
        }
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), path)) {
            ByteBuffer stored = file.read(block, ByteBuffer::allocate);
            assertEquals(7, stored.getLong(0), "the checkpoint holds the block");
        }
    }

    /**
     * The write-back of an earlier state ends after the checkpoint's image of the newer state became
     * the current version and before the checkpointer decides whether the entry is clean: the
     * earlier state is then what a read finds, so the entry must stay dirty.
     */
    @Test
    void aWriteBackOfAnEarlierStateEndingJustAfterTheCheckpointImageLeavesTheBlockDirty() throws Exception {
        try (BlockFile file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("between.data"));
                Rig rig = new Rig(file, 1)) {
            NodeCache cache = rig.cache;
            rig.evictorWaitsAtTheGate();
            rig.change(2);
            // Held, so that the evictor does not write the block again once the gate opens.
            Words held = cache.pin(rig.block, Words.class, rig.loader);

            cache.beginCheckpoint(file::beginCheckpoint);
            // Once the image of 2 is installed, the write-back of 1 ends and replaces it, all
            // before the checkpointer looks at the entry again, which nobody pins by then.
            rig.backing.afterCheckpointImage = () -> {
                rig.backing.letGo.countDown();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (cache.stats().writeBacks() == 0 && System.nanoTime() < deadline) {
                    Thread.onSpinWait(); // until the evictor has ended its write-back
                }
                cache.release(held, false);
            };
            cache.writeCheckpointImages();
            file.finishCheckpoint(null);
            rig.room.get(10, TimeUnit.SECONDS);
            assertEquals(2, rig.valueAfterEviction(), "the block read back after its eviction");
        }
    }

    /**
     * A cache smaller than one block over a real block file, whose first write-back waits at a gate,
     * holding one dirty block: any wait for room evicts the block unless it is pinned.
     */
    private static final class Rig implements AutoCloseable {
        final NodeMemory memory = new NodeMemory();
        final GatedBacking backing;
        final NodeCache cache;
        final EntryLoader<Words> loader = (b, data) -> new Words(b, data, memory);
        final long block;
        /** The eviction started by {@link #evictorWaitsAtTheGate}. */
        CompletableFuture<Void> room;

        Rig(BlockFile file, long value) {
            backing = new GatedBacking(new BlockFileBacking(file, memory));
            cache = new NodeCache(backing, memory, BLOCK_BYTES / 2);
            block = file.allocateBlockNumber();
            Words words = Words.filled(block, memory, value);
            cache.add(words);
            cache.release(words, true);
        }

        /** Starts an eviction of the block and waits until its write-back stands at the gate. */
        void evictorWaitsAtTheGate() throws InterruptedException {
            room = CompletableFuture.runAsync(cache::awaitRoom);
            assertTrue(backing.writing.await(10, TimeUnit.SECONDS), "the evictor began its write-back");
        }

        /** Changes every word of the block to {@code value}. */
        void change(long value) {
            Words pinned = cache.pin(block, Words.class, loader);
            pinned.fill(value);
            cache.release(pinned, true);
        }

        /** Evicts the block (written back if dirty) and reads it again: the value a reader finds. */
        long valueAfterEviction() {
            cache.awaitRoom();
            Words reread = cache.pin(block, Words.class, loader);
            try {
                return reread.value();
            } finally {
                cache.release(reread, false);
            }
        }

        @Override
        public void close() {
            backing.letGo.countDown();
            cache.releaseAll();
        }
    }

    /** The real block file behind the cache, whose first write-back waits at a gate. */
    private static final class GatedBacking extends ForwardingBackingStore {
        final CountDownLatch writing = new CountDownLatch(1);
        final CountDownLatch letGo = new CountDownLatch(1);
        volatile Runnable afterCheckpointImage = () -> { };
        private final AtomicBoolean first = new AtomicBoolean(true);

        GatedBacking(BlockFileBacking real) {
            super(real);
        }

        @Override
        public void writeBack(long blockNumber, ByteBuf image, BlockCompressor codec) {
            if (first.compareAndSet(true, false)) {
                writing.countDown();
                try {
                    letGo.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            super.writeBack(blockNumber, image, codec);
        }

        @Override
        public boolean writeCheckpointImage(long blockNumber, ByteBuf image, BlockCompressor codec) {
            boolean current = super.writeCheckpointImage(blockNumber, image, codec);
            afterCheckpointImage.run();
            return current;
        }
    }

    /** A block of equal 8-byte words. */
    private static final class Words extends CacheEntry {
        private ByteBuf words;
        private final NodeMemory memory;

        Words(long blockNumber, ByteBuf words, NodeMemory memory) {
            super(blockNumber);
            this.words = words;
            this.memory = memory;
        }

        static Words filled(long blockNumber, NodeMemory memory, long value) {
            ByteBuf buf = memory.allocate(BLOCK_BYTES);
            buf.writeZero(BLOCK_BYTES);
            Words w = new Words(blockNumber, buf, memory);
            w.fill(value);
            return w;
        }

        long value() {
            return words.getLong(0);
        }

        void fill(long value) {
            for (int i = 0; i < BLOCK_BYTES / 8; i++) {
                words.setLong(i * 8, value);
            }
        }

        @Override
        public BlockCompressor compressor() {
            return LZ4;
        }

        @Override
        public long memoryBytes() {
            return words.capacity();
        }

        @Override
        public int serializedSizeBound() {
            return BLOCK_BYTES;
        }

        @Override
        public void serialize(ByteBuf out) {
            out.writeBytes(words, 0, BLOCK_BYTES);
        }

        @Override
        protected void releaseMemory() {
            memory.release(words);
            words = null;
        }
    }
}
