package io.betree;

import java.time.Duration;
import java.util.Objects;

/**
 * Settings of one {@link Index}. Immutable: each setter returns a new instance. The shape settings
 * (node size, basement size, fanout) are fixed when the index is created and stored with it; the
 * codec may change on a later open and applies to blocks written from then on.
 *
 * <p>Defaults, chosen by measurement (see docs/design.md): 4 MiB nodes, 64 KiB basements, fanout
 * 16, LZ4. A node size or basement size left unset adapts to the environment's cache when the
 * index is created: halved until eight nodes fit the cache (a basement at most half a node), so
 * that any cache the environment accepts works with the defaults. A size set explicitly is kept,
 * and refused when it does not fit.
 */
public final class IndexOptions {
    /** Default node size: 4 MiB. */
    public static final int DEFAULT_NODE_SIZE = 4 << 20;
    /** Default basement size: 64 KiB. */
    public static final int DEFAULT_BASEMENT_SIZE = 64 << 10;
    /** Default fanout: 16. */
    public static final int DEFAULT_FANOUT = 16;
    /** Nodes the cache must hold at least. */
    static final int CACHE_NODES = 8;
    private static final int MIN_NODE_SIZE = 64 << 10;

    private final Codec codec;
    private final int level;
    private final int nodeSize;
    private final int basementSize;
    private final int fanout;
    private final boolean nodeSizeSet;
    private final boolean basementSizeSet;
    /** The TTL of the index's puts that have none of their own; null for none. */
    private final Duration ttl;

    private IndexOptions(Codec codec, int level, int nodeSize, int basementSize, int fanout, boolean nodeSizeSet,
            boolean basementSizeSet, Duration ttl) {
        this.codec = codec;
        this.level = level;
        this.nodeSize = nodeSize;
        this.basementSize = basementSize;
        this.fanout = fanout;
        this.nodeSizeSet = nodeSizeSet;
        this.basementSizeSet = basementSizeSet;
        this.ttl = ttl;
    }

    /**
     * LZ4, 4 MiB nodes, 64 KiB basements, fanout 16. ZSTD compresses about a fifth smaller; it is
     * not the default because on JDK 24+ its native library makes the JVM print a warning that
     * only {@code --enable-native-access=ALL-UNNAMED} silences.
     */
    public static IndexOptions defaults() {
        return new IndexOptions(Codec.LZ4, Codec.LZ4.defaultLevel(), DEFAULT_NODE_SIZE, DEFAULT_BASEMENT_SIZE,
                DEFAULT_FANOUT, false, false, null);
    }

    /** Compresses blocks with {@code codec} at its default level. */
    public IndexOptions codec(Codec codec) {
        Objects.requireNonNull(codec, "codec");
        return new IndexOptions(codec, codec.defaultLevel(), nodeSize, basementSize, fanout, nodeSizeSet,
                basementSizeSet, ttl);
    }

    /**
     * Compresses blocks with {@code codec} at {@code level}.
     *
     * @throws IllegalArgumentException if the level is out of the codec's range
     */
    public IndexOptions codec(Codec codec, int level) {
        Objects.requireNonNull(codec, "codec");
        codec.compressor(level);
        return new IndexOptions(codec, level, nodeSize, basementSize, fanout, nodeSizeSet, basementSizeSet, ttl);
    }

    /** Node size in bytes, 64 KiB to 64 MiB; kept as set, whatever the cache. */
    public IndexOptions nodeSize(int bytes) {
        if (bytes < MIN_NODE_SIZE || bytes > (64 << 20)) {
            throw new IllegalArgumentException("nodeSize must be between 64 KiB and 64 MiB, was " + bytes);
        }
        return new IndexOptions(codec, level, bytes, basementSize, fanout, true, basementSizeSet, ttl);
    }

    /** Basement size in bytes, 4 KiB to 4 MiB; kept as set, whatever the cache. */
    public IndexOptions basementSize(int bytes) {
        if (bytes < (4 << 10) || bytes > (4 << 20)) {
            throw new IllegalArgumentException("basementSize must be between 4 KiB and 4 MiB, was " + bytes);
        }
        return new IndexOptions(codec, level, nodeSize, bytes, fanout, nodeSizeSet, true, ttl);
    }

    /** Maximum children of an internal node, 4 to 1024. */
    public IndexOptions fanout(int children) {
        if (children < 4 || children > 1024) {
            throw new IllegalArgumentException("fanout must be between 4 and 1024, was " + children);
        }
        return new IndexOptions(codec, level, nodeSize, basementSize, children, nodeSizeSet, basementSizeSet, ttl);
    }

    /**
     * Makes every row the index's puts write expire {@code ttl} after the put, unless the put gives
     * a TTL of its own ({@link Index#put(byte[], byte[], Duration)}): from then on reads do not
     * see it, and the space goes when its leaf is next rewritten. It holds for the puts made through
     * the environment's handle of the index from the {@link Environment#openIndex} call given these
     * options on, until one given another TTL; {@link Duration#ZERO} turns it off. Not stored:
     * give it at every open. Rows written before keep what they were written with.
     *
     * @throws IllegalArgumentException if negative
     */
    public IndexOptions ttl(Duration ttl) {
        Objects.requireNonNull(ttl, "ttl");
        if (ttl.isNegative()) {
            throw new IllegalArgumentException("ttl must not be negative, was " + ttl);
        }
        return new IndexOptions(codec, level, nodeSize, basementSize, fanout, nodeSizeSet, basementSizeSet, ttl);
    }

    /** The TTL set with {@link #ttl(Duration)}, or null when none was set. */
    public Duration ttl() {
        return ttl;
    }

    /**
     * These options for an environment whose cache holds {@code cacheBytes}: a node size not set
     * explicitly halved until eight nodes fit (64 KiB at least), a basement size not set explicitly
     * at most half of that node size.
     */
    IndexOptions fittedTo(long cacheBytes) {
        int node = nodeSize;
        if (!nodeSizeSet) {
            while (node > MIN_NODE_SIZE && (long) node * CACHE_NODES > cacheBytes) {
                node >>= 1;
            }
        }
        int basement = basementSizeSet ? basementSize : Math.min(basementSize, node / 2);
        return new IndexOptions(codec, level, node, basement, fanout, nodeSizeSet, basementSizeSet, ttl);
    }

    /** The codec. */
    public Codec codec() {
        return codec;
    }

    /** The codec level. */
    public int level() {
        return level;
    }

    /** Node size in bytes (before {@linkplain IndexOptions adapting} to the cache, when not set). */
    public int nodeSize() {
        return nodeSize;
    }

    /** Basement size in bytes (before {@linkplain IndexOptions adapting} to the cache, when not set). */
    public int basementSize() {
        return basementSize;
    }

    /** Fanout. */
    public int fanout() {
        return fanout;
    }
}
