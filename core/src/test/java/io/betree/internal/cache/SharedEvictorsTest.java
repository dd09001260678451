package io.betree.internal.cache;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.betree.internal.cache.NodeCacheConcurrencyTest.Counter;
import io.betree.internal.cache.NodeCacheConcurrencyTest.Store;
import io.betree.internal.memory.NodeMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * Many node caches in one process evict on the shared evictor threads ({@link Evictors}): forty
 * caches, each written far past its budget by a thread of its own, all get their dirty blocks
 * written back and stay near their budgets, while no more than the pool's few evictor threads
 * ever run.
 */
class SharedEvictorsTest {
    private static final int CACHES = 40;
    private static final int BLOCKS = 200;
    private static final int BLOCK_BYTES = 16 << 10;

    @Test
    void fortyCachesShareAFewEvictorThreads() throws Exception {
        List<NodeCache> caches = new ArrayList<>();
        List<Store> stores = new ArrayList<>();
        List<NodeMemory> memories = new ArrayList<>();
        for (int c = 0; c < CACHES; c++) {
            NodeMemory memory = new NodeMemory();
            Store store = new Store(memory);
            for (long b = 0; b < BLOCKS; b++) {
                store.images.put(b, new byte[BLOCK_BYTES]);
            }
            memories.add(memory);
            stores.add(store);
            caches.add(new NodeCache(store, memory, 20L * BLOCK_BYTES));
        }
        Set<String> evictorThreads = ConcurrentHashMap.newKeySet();
        java.util.concurrent.atomic.AtomicLong mostEvictorsAtOnce = new java.util.concurrent.atomic.AtomicLong();
        List<Throwable> failures = new CopyOnWriteArrayList<>();
        List<Thread> writers = new ArrayList<>();
        for (int c = 0; c < CACHES; c++) {
            NodeCache cache = caches.get(c);
            NodeMemory memory = memories.get(c);
            writers.add(new Thread(() -> {
                try {
                    EntryLoader<Counter> loader = (b, data) -> new Counter(b, data, memory);
                    for (int round = 0; round < 3; round++) {
                        for (long b = 0; b < BLOCKS; b++) {
                            Counter counter = cache.pin(b, Counter.class, loader);
                            counter.increment();
                            cache.unpin(counter, true);
                            cache.awaitRoom();
                        }
                    }
                } catch (Throwable t) {
                    failures.add(t);
                }
            }, "writer-" + c));
        }
        java.util.concurrent.atomic.AtomicBoolean done = new java.util.concurrent.atomic.AtomicBoolean();
        Thread sampler = new Thread(() -> {
            while (!done.get()) {
                Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                        .filter(n -> n.startsWith("betree-evictor")).forEach(evictorThreads::add);
                long live = Thread.getAllStackTraces().keySet().stream()
                        .filter(t -> t.isAlive() && t.getName().startsWith("betree-evictor")).count();
                mostEvictorsAtOnce.accumulateAndGet(live, Math::max);
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, "evictor-sampler");
        sampler.start();
        writers.forEach(Thread::start);
        for (Thread t : writers) {
            t.join();
        }
        done.set(true);
        sampler.join();
        if (!failures.isEmpty()) {
            throw new AssertionError(failures.size() + " failures, first: " + failures.get(0), failures.get(0));
        }
        assertTrue(mostEvictorsAtOnce.get() <= Evictors.THREADS, mostEvictorsAtOnce.get() + " evictor threads at once for "
                + CACHES + " caches");
        assertTrue(evictorThreads.size() >= 1, "eviction ran on the shared evictor threads");
        for (int c = 0; c < CACHES; c++) {
            NodeCache.Stats s = caches.get(c).stats();
            assertTrue(s.writeBacks() > 0, "cache " + c + " wrote back dirty blocks: " + s);
            assertTrue(s.bytes() <= 20L * BLOCK_BYTES + BLOCK_BYTES, "cache " + c + " over its limit: " + s);
        }
        for (int c = 0; c < CACHES; c++) {
            NodeCache cache = caches.get(c);
            NodeMemory memory = memories.get(c);
            EntryLoader<Counter> loader = (b, data) -> new Counter(b, data, memory);
            for (long b = 0; b < BLOCKS; b++) {
                Counter counter = cache.pin(b, Counter.class, loader);
                try {
                    assertEquals(3, counter.value(), "changes of block " + b + " of cache " + c);
                } finally {
                    cache.unpin(counter, false);
                }
            }
            cache.releaseAll();
            assertEquals(0, memory.used(), "cache " + c + " released its memory");
            assertEquals(0, stores.get(c).tornImages, "torn images of cache " + c);
        }
    }
}
