package io.betree.internal.tree;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.betree.compression.Compressors;
import io.betree.internal.cache.NodeCache;
import io.betree.internal.fault.FailureListener;
import io.betree.internal.memory.NodeMemory;
import io.betree.internal.storage.BlockFile;
import io.betree.internal.storage.StorageEnv;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.function.LongSupplier;

/**
 * A tree over real parts for tests: a block file, node memory, a cache of the given size, small
 * nodes unless told otherwise (64 KiB, basements of 4 KiB, fanout 4, LZ4). {@link #close} releases it all and checks
 * that no off-heap byte is left.
 */
final class TreeRig implements AutoCloseable {
    final BlockFile file;
    final NodeMemory memory = new NodeMemory();
    final NodeCache cache;
    final BeTree tree;

    /** A rig in {@code dir} whose oldest snapshot is what {@code horizon} says. */
    TreeRig(Path dir, long cacheBytes, LongSupplier horizon) throws IOException {
        this(dir, cacheBytes, horizon, new TreeConfig(64 << 10, 4 << 10, 4, Compressors.create("lz4")));
    }

    /** A rig of nodes shaped by {@code config}. */
    TreeRig(Path dir, long cacheBytes, LongSupplier horizon, TreeConfig config) throws IOException {
        file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        cache = new NodeCache(new BlockFileBacking(file, memory), memory, cacheBytes);
        tree = BeTree.create(cache, file, config, horizon::getAsLong, FailureListener.IGNORE);
    }

    /**
     * Flushes until the root is within its size and checkpoints once the background flush steps
     * still running have ended, so that every node is clean and stored.
     */
    void settle() throws IOException {
        while (tree.flushStep()) {
            // until the root is within its size
        }
        BeTree.withFlushesPaused(List.of(tree), () -> BeTree.whileUnchanged(List.of(tree), () -> {
            cache.beginCheckpoint(file::beginCheckpoint);
            return null;
        }));
        cache.writeCheckpointImages();
        file.finishCheckpoint(null);
    }

    @Override
    public void close() throws IOException {
        tree.close();
        cache.releaseAll();
        file.close();
        assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
    }
}
