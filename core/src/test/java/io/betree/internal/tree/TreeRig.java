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
import java.util.function.LongSupplier;

/**
 * A tree over real parts for tests: a block file, node memory, a cache of the given size, small
 * nodes (64 KiB, basements of 4 KiB, fanout 4, LZ4), left out of the {@link Cleaner}'s drains.
 * {@link #close} releases it all and checks that no off-heap byte is left.
 */
final class TreeRig implements AutoCloseable {
    final BlockFile file;
    final NodeMemory memory = new NodeMemory();
    final NodeCache cache;
    final BeTree tree;

    /** A rig in {@code dir} whose oldest snapshot is what {@code horizon} says. */
    TreeRig(Path dir, long cacheBytes, LongSupplier horizon) throws IOException {
        this(dir, cacheBytes, horizon, UpdateFunctions.NONE);
    }

    /** As {@link #TreeRig(Path, long, LongSupplier)}, whose update messages call {@code functions}. */
    TreeRig(Path dir, long cacheBytes, LongSupplier horizon, UpdateFunctions functions) throws IOException {
        file = BlockFile.open(StorageEnv.defaultEnv(), dir.resolve("tree.data"));
        cache = new NodeCache(new BlockFileBacking(file, memory), memory, cacheBytes);
        TreeConfig config = new TreeConfig(64 << 10, 4 << 10, 4, Compressors.create("lz4"));
        tree = BeTree.create(cache, file, config, horizon::getAsLong, FailureListener.IGNORE, functions);
        // Tests count reads and flushes: no drain of the Cleaner's in between (CleanerTest asks for it).
        Cleaner.forget(tree);
    }

    @Override
    public void close() throws IOException {
        tree.close();
        cache.releaseAll();
        file.close();
        assertEquals(0, memory.used(), "off-heap bytes left after the cache released everything");
    }
}
