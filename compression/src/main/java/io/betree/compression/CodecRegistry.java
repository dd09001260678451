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
import java.util.regex.Pattern;

/** An immutable, validated set of codec providers, indexed by id and by name. */
final class CodecRegistry {

    private static final int MAX_ID = 255;
    private static final Pattern NAME = Pattern.compile("[a-z0-9][a-z0-9_.-]*");

    private final Map<String, CompressorProvider> byName = new HashMap<>();
    private final BlockCompressor[] byId = new BlockCompressor[MAX_ID + 1];
    private final List<String> names;

    /**
     * Indexes {@code providers} and creates each codec's default-level instance.
     *
     * @throws IllegalStateException if a provider is inconsistent or clashes with another
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
            if (byId[id] != null || byName.containsKey(name)) {
                throw new IllegalStateException("codec provider " + p + " (" + name + ", id " + id
                        + ") clashes with an already registered codec");
            }
            BlockCompressor instance = defaultInstance(p);
            if (instance.id() != id || !name.equals(instance.name())) {
                throw new IllegalStateException("codec provider " + p + " created " + instance.name()
                        + " with id " + instance.id() + " instead of " + name + " with id " + id);
            }
            byId[id] = instance;
            byName.put(name, p);
            ordered.add(name);
        }
        names = List.copyOf(ordered);
    }

    private static BlockCompressor defaultInstance(CompressorProvider p) {
        try {
            int level = p.defaultLevel();
            p.validateLevel(level);
            return Objects.requireNonNull(p.create(level), "created compressor");
        } catch (RuntimeException e) {
            throw new IllegalStateException("codec provider " + p + " cannot create its default compressor", e);
        }
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

    BlockCompressor forId(int id) {
        BlockCompressor c = id >= 0 && id <= MAX_ID ? byId[id] : null;
        if (c == null) {
            throw new CompressionFormatException("unknown codec id " + id);
        }
        return c;
    }

    BlockCompressor create(String name, int level) {
        CompressorProvider p = provider(name);
        p.validateLevel(level);
        return p.create(level);
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
