package io.betree.internal.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The catalog's stored form: a round trip, a version 1 catalog (no function names), and damage. */
class CatalogTest {
    private static final Catalog.Entry WITH_NAMES = new Catalog.Entry(3, "orders", 77, "lz4", 0, 4 << 20, 128 << 10,
            16, List.of("add", "añadir"));

    @Test
    void roundTrip() {
        Catalog.Contents c = new Catalog.Contents(42, 4096, 5,
                List.of(WITH_NAMES, new Catalog.Entry(4, "empty", 0, "none", 0, 1 << 20, 64 << 10, 8, List.of())));
        assertEquals(c, Catalog.read(Catalog.write(c)));
    }

    @Test
    void aVersionOneCatalogNamesNoFunctions() {
        byte[] name = "orders".getBytes(StandardCharsets.UTF_8);
        ByteBuffer v1 = ByteBuffer.allocate(128);
        v1.putInt(0x42544354).putInt(1).putLong(42).putLong(4096).putInt(5).putInt(1);
        v1.putInt(3).putShort((short) name.length).put(name).putLong(77).put((byte) 3).put("lz4".getBytes(StandardCharsets.US_ASCII));
        v1.putInt(0).putInt(4 << 20).putInt(128 << 10).putInt(16);
        v1.flip();
        Catalog.Entry e = Catalog.read(v1).entries().get(0);
        assertEquals(new Catalog.Entry(3, "orders", 77, "lz4", 0, 4 << 20, 128 << 10, 16, List.of()), e);
    }

    @Test
    void aTruncatedOrNewerCatalogIsRefused() {
        ByteBuffer whole = Catalog.write(new Catalog.Contents(1, 2, 3, List.of(WITH_NAMES)));
        ByteBuffer cut = whole.duplicate().limit(whole.limit() - 3);
        assertThrows(IllegalArgumentException.class, () -> Catalog.read(cut));
        ByteBuffer newer = ByteBuffer.allocate(whole.remaining()).put(whole.duplicate()).flip();
        newer.putInt(4, 3);
        assertThrows(IllegalArgumentException.class, () -> Catalog.read(newer));
    }
}
