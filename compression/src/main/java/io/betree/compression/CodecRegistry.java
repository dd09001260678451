package io.betree.compression;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.locks.ReentrantLock;
import java.util.regex.Pattern;

/**
 * An immutable, validated set of codec providers, indexed by id and by name. Each codec's
 * default-level instance, the one {@link #forId} returns, is created on first use: creating a
 * codec may load its native library (zstd-jni, lz4-java), which on JDK 24+ prints a warning, so
 * an application that never uses a codec must not pay for it.
 */
final class CodecRegistry {

    private static final int MAX_ID = 255;
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]*");

    private final Map<String, CompressorProvider> byName = new HashMap<>();
    private final CompressorProvider[] providerById = new CompressorProvider[MAX_ID + 1];
    /** Default-level instances created so far, by id; a slot is set once and never cleared. */
    private final AtomicReferenceArray<BlockCompressor> byId = new AtomicReferenceArray<>(MAX_ID + 1);
    /** Serialises creation, so each id gets one instance; a lock, not a monitor, so a virtual thread does not pin. */
    private final ReentrantLock creating = new ReentrantLock();
    private final List<String> names;

    /**
     * Indexes {@code providers}; no codec instance is created yet.
     *
     * @throws IllegalStateException if a provider has an invalid name or id, or clashes with another
     */
    CodecRegistry(List<CompressorProvider> providers) {
        List<CompressorProvider> sorted = new ArrayList<>(providers);
        sorted.sort(Comparator.comparingInt(CompressorProvider::id));
        List<String> ordered = new ArrayList<>();
        for (CompressorProvider p : sorted) {
            String name = p.name();
            int id = p.id();
            if (name == null || !NAME.matcher(name).matches() || id < 0 || id > MAX_ID) {
                throw new IllegalStateException("codec provider " + p + " has invalid name '" + name
                        + "' or id " + id + " (names are lower-case, ids 0.." + MAX_ID + ")");
            }
            if (providerById[id] != null || byName.containsKey(name)) {
                throw new IllegalStateException("codec provider " + p + " (" + name + ", id " + id
                        + ") clashes with an already registered codec");
            }
            providerById[id] = p;
            byName.put(name, p);
            ordered.add(name);
        }
        names = List.copyOf(ordered);
    }

    /**
     * Creates the default-level instance of {@code p}, checking it.
     *
     * @throws IllegalStateException if the provider fails or creates a compressor of another codec
     */
    private static BlockCompressor defaultInstance(CompressorProvider p) {
        BlockCompressor instance;
        try {
            int level = p.defaultLevel();
            p.validateLevel(level);
            instance = Objects.requireNonNull(p.create(level), "created compressor");
        } catch (RuntimeException e) {
            throw new IllegalStateException("codec provider " + p + " cannot create its default compressor", e);
        }
        return checked(p, instance);
    }

    /** Returns {@code instance} if it has the name and id of {@code p}, otherwise throws. */
    private static BlockCompressor checked(CompressorProvider p, BlockCompressor instance) {
        if (instance.id() != p.id() || !p.name().equals(instance.name())) {
            throw new IllegalStateException("codec provider " + p + " created " + instance.name()
                    + " with id " + instance.id() + " instead of " + p.name() + " with id " + p.id());
        }
        return instance;
    }

    /** The built-in codecs plus those found through {@link ServiceLoader} in {@code loader}. */
    static CodecRegistry load(ClassLoader loader) {
        List<CompressorProvider> providers = new ArrayList<>(BuiltinProvider.all());
        try {
            for (CompressorProvider p : ServiceLoader.load(CompressorProvider.class, loader)) {
                providers.add(p);
            }
        } catch (ServiceConfigurationError e) {
            throw new IllegalStateException("cannot load codec providers: " + e.getMessage(), e);
        }
        return new CodecRegistry(providers);
    }

    /**
     * The shared default-level instance of codec {@code id}, created on the first call.
     *
     * @throws CompressionFormatException if no codec has that id
     * @throws IllegalStateException if the provider cannot create a valid default instance (on
     *     every call: a failure is not remembered)
     */
    BlockCompressor forId(int id) {
        if (id < 0 || id > MAX_ID || providerById[id] == null) {
            throw new CompressionFormatException("unknown codec id " + id);
        }
        BlockCompressor c = byId.get(id);
        return c != null ? c : createDefault(id);
    }

    private BlockCompressor createDefault(int id) {
        creating.lock();
        try {
            BlockCompressor c = byId.get(id);
            if (c == null) {
                c = defaultInstance(providerById[id]);
                byId.set(id, c);
            }
            return c;
        } finally {
            creating.unlock();
        }
    }

    BlockCompressor create(String name, int level) {
        CompressorProvider p = provider(name);
        p.validateLevel(level);
        return checked(p, Objects.requireNonNull(p.create(level), "created compressor"));
    }

    int defaultLevel(String name) {
        return provider(name).defaultLevel();
    }

    List<String> names() {
        return names;
    }

    private CompressorProvider provider(String name) {
        Objects.requireNonNull(name, "name");
        CompressorProvider p = byName.get(name.toLowerCase(Locale.ROOT));
        if (p == null) {
            throw new IllegalArgumentException("unknown codec '" + name + "'; valid names are " + names);
        }
        return p;
    }
}
