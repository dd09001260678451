package io.betree.compression;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Tests of the codec registry, including providers found through {@link java.util.ServiceLoader}. */
class CompressorsTest {

    private static final List<String> BUILTINS = List.of("none", "lz4", "zstd", "xz", "deflate");

    /** Levels worth checking per codec: the extremes and the default. */
    private static final Map<String, int[]> LEVELS = Map.of(
            "none", new int[] {0},
            "lz4", new int[] {0, 1, 9, 17},
            "zstd", new int[] {-5, -1, 1, 3, 19, 22},
            "xz", new int[] {0, 6, 9},
            "deflate", new int[] {0, 1, 6, 9});

    @Test
    void listsBuiltinsInIdOrder() {
        assertEquals(BUILTINS, Compressors.names());
        assertThrows(UnsupportedOperationException.class, () -> Compressors.names().add("x"));
        for (int id = 0; id < BUILTINS.size(); id++) {
            BlockCompressor c = Compressors.forId(id);
            assertEquals(id, c.id());
            assertEquals(BUILTINS.get(id), c.name());
            assertEquals(Compressors.defaultLevel(c.name()), c.level());
            assertSame(c, Compressors.forId(id), "forId should return a shared instance");
        }
    }

    @Test
    void knowsDefaultLevels() {
        assertEquals(0, Compressors.defaultLevel("none"));
        assertEquals(0, Compressors.defaultLevel("lz4"));
        assertEquals(3, Compressors.defaultLevel("zstd"));
        assertEquals(6, Compressors.defaultLevel("xz"));
        assertEquals(6, Compressors.defaultLevel("deflate"));
        assertEquals(3, Compressors.create("zstd").level());
    }

    @Test
    void rejectsUnknownIds() {
        for (int id : new int[] {-1, 5, 200, 255, 256, Integer.MAX_VALUE}) {
            CompressionFormatException e = assertThrows(CompressionFormatException.class, () -> Compressors.forId(id));
            assertEquals("unknown codec id " + id, e.getMessage());
        }
    }

    @Test
    void looksUpNamesCaseInsensitively() {
        BlockCompressor c = Compressors.create("ZStd", 19);
        assertEquals("zstd", c.name());
        assertEquals(19, c.level());
        assertEquals("deflate", Compressors.create("DEFLATE").name());
        assertEquals(6, Compressors.defaultLevel("Xz"));
    }

    @Test
    void rejectsUnknownNamesListingValidOnes() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Compressors.create("snappy", 1));
        for (String name : BUILTINS) {
            assertTrue(e.getMessage().contains(name), e.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> Compressors.create("snappy"));
        assertThrows(IllegalArgumentException.class, () -> Compressors.defaultLevel(""));
    }

    @Test
    void rejectsOutOfRangeLevelsNamingTheRange() {
        Map<String, int[]> invalid = Map.of(
                "none", new int[] {-1, 1},
                "lz4", new int[] {-1, 18},
                "zstd", new int[] {0, 23, Integer.MIN_VALUE},
                "xz", new int[] {-1, 10},
                "deflate", new int[] {-1, 10});
        Map<String, String> ranges = Map.of("none", "0", "lz4", "1..17", "zstd", "1..22", "xz", "0..9", "deflate", "0..9");
        invalid.forEach((name, levels) -> {
            for (int level : levels) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> Compressors.create(name, level), name + " level " + level);
                assertTrue(e.getMessage().contains(ranges.get(name)), e.getMessage());
            }
        });
    }

    @Test
    void forIdDecompressesEveryLevel() {
        byte[] data = TestInputs.mixed(100_000, 21);
        LEVELS.forEach((name, levels) -> {
            for (int level : levels) {
                BlockCompressor c = Compressors.create(name, level);
                assertEquals(level, c.level());
                byte[] block = CodecAssertions.compress(c, data, BufferKind.HEAP, BufferKind.DIRECT, c.maxCompressedLength(data.length));
                byte[] out = CodecAssertions.decompress(Compressors.forId(c.id()), block, data.length,
                        BufferKind.DIRECT, BufferKind.HEAP, data.length);
                assertArrayEquals(data, out, name + " level " + level);
            }
        });
    }

    @Test
    void loadsProvidersThroughServiceLoader(@TempDir Path dir) throws Exception {
        Path services = dir.resolve("META-INF/services");
        Files.createDirectories(services);
        Files.writeString(services.resolve(CompressorProvider.class.getName()),
                "# test provider\n" + TestCodecProvider.class.getName() + "\n", StandardCharsets.UTF_8);
        try (URLClassLoader loader = new URLClassLoader(new URL[] {dir.toUri().toURL()}, getClass().getClassLoader())) {
            CodecRegistry registry = CodecRegistry.load(loader);
            List<String> expected = new ArrayList<>(BUILTINS);
            expected.add(TestCodecProvider.NAME);
            assertEquals(expected, registry.names());
            BlockCompressor c = registry.create("Reverse-Test", 0);
            byte[] data = TestInputs.text(1000, 22);
            CodecAssertions.assertRoundTrip(c, data, BufferKind.HEAP_SLICE, BufferKind.DIRECT);
            assertEquals(TestCodecProvider.ID, registry.forId(TestCodecProvider.ID).id());
            assertThrows(IllegalArgumentException.class, () -> registry.create(TestCodecProvider.NAME, 1));
        }
    }

    @Test
    void refusesClashingProviders() {
        List<CompressorProvider> providers = new ArrayList<>(BuiltinProvider.all());
        providers.add(new TestCodecProvider());
        new CodecRegistry(providers);
        providers.add(new TestCodecProvider());
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> new CodecRegistry(providers));
        assertTrue(e.getMessage().contains("clashes"), e.getMessage());
        List<CompressorProvider> twice = new ArrayList<>(BuiltinProvider.all());
        twice.addAll(BuiltinProvider.all());
        assertThrows(IllegalStateException.class, () -> new CodecRegistry(twice));
    }

    @Test
    void createsInstancesOnFirstUse() {
        List<CountingProvider> providers = new ArrayList<>();
        for (CompressorProvider p : BuiltinProvider.all()) {
            providers.add(new CountingProvider(p));
        }
        CodecRegistry registry = new CodecRegistry(new ArrayList<>(providers));
        assertEquals(BUILTINS, registry.names());
        assertEquals(6, registry.defaultLevel("xz"));
        for (CountingProvider p : providers) {
            assertEquals(0, p.created.get(), p + " created before use");
        }
        BlockCompressor xz = registry.forId(XzCompressor.ID);
        assertSame(xz, registry.forId(XzCompressor.ID));
        for (CountingProvider p : providers) {
            assertEquals(p.id() == XzCompressor.ID ? 1 : 0, p.created.get(), p.toString());
        }
        assertNotSame(xz, registry.create("xz", 6), "create returns a new instance");
    }

    @Test
    void createsOneSharedInstanceUnderContention() throws Exception {
        CountingProvider slow = new CountingProvider(new TestCodecProvider(), 20);
        CodecRegistry registry = new CodecRegistry(List.of(slow));
        int threads = 16;
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<BlockCompressor>> results = new ArrayList<>();
            for (int i = 0; i < threads; i++) {
                results.add(pool.submit(() -> {
                    start.await();
                    return registry.forId(TestCodecProvider.ID);
                }));
            }
            start.countDown();
            BlockCompressor first = results.get(0).get(30, TimeUnit.SECONDS);
            for (Future<BlockCompressor> f : results) {
                assertSame(first, f.get(30, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(1, slow.created.get());
    }

    @Test
    void reportsBrokenProvidersWhenUsedOnEveryCall() {
        CountingProvider failing = new CountingProvider(new TestCodecProvider(), "failing", 201, level -> {
            throw new IllegalStateException("no native library");
        });
        CountingProvider lying = new CountingProvider(new TestCodecProvider(), "lying", 202, level -> new NoneCompressor());
        List<CompressorProvider> providers = new ArrayList<>(BuiltinProvider.all());
        providers.add(failing);
        providers.add(lying);
        CodecRegistry registry = new CodecRegistry(providers);
        for (int attempt = 1; attempt <= 2; attempt++) {
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> registry.forId(201));
            assertTrue(e.getMessage().contains("cannot create its default compressor"), e.getMessage());
            assertEquals("no native library", e.getCause().getMessage());
            assertEquals(attempt, failing.created.get(), "a failure is not remembered");
            e = assertThrows(IllegalStateException.class, () -> registry.forId(202));
            assertTrue(e.getMessage().contains("none with id 0 instead of lying with id 202"), e.getMessage());
        }
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> registry.create("lying", 0));
        assertTrue(e.getMessage().contains("instead of lying"), e.getMessage());
        assertEquals("none", registry.forId(NoneCompressor.ID).name(), "other codecs stay usable");
    }

    /** Delegates to a provider, counting {@link #create} calls; optionally renamed, slow or failing. */
    private static final class CountingProvider implements CompressorProvider {

        final AtomicInteger created = new AtomicInteger();
        private final CompressorProvider delegate;
        private final String name;
        private final int id;
        private final IntFunction<BlockCompressor> factory;
        private final long delayMillis;

        CountingProvider(CompressorProvider delegate) {
            this(delegate, 0);
        }

        CountingProvider(CompressorProvider delegate, long delayMillis) {
            this(delegate, delegate.name(), delegate.id(), delegate::create, delayMillis);
        }

        CountingProvider(CompressorProvider delegate, String name, int id, IntFunction<BlockCompressor> factory) {
            this(delegate, name, id, factory, 0);
        }

        private CountingProvider(CompressorProvider delegate, String name, int id,
                IntFunction<BlockCompressor> factory, long delayMillis) {
            this.delegate = delegate;
            this.name = name;
            this.id = id;
            this.factory = factory;
            this.delayMillis = delayMillis;
        }

        @Override
        public String name() {
            return name;
        }

        @Override
        public int id() {
            return id;
        }

        @Override
        public int defaultLevel() {
            return delegate.defaultLevel();
        }

        @Override
        public void validateLevel(int level) {
            delegate.validateLevel(level);
        }

        @Override
        public BlockCompressor create(int level) {
            created.incrementAndGet();
            if (delayMillis > 0) {
                try {
                    Thread.sleep(delayMillis);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
            return factory.apply(level);
        }

        @Override
        public String toString() {
            return "counting " + name;
        }
    }
}
