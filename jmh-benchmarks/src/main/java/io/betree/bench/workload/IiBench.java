package io.betree.bench.workload;

import io.betree.bench.engine.EngineAdapter;
import io.betree.bench.engine.EngineAdapter.Table;
import java.nio.ByteBuffer;

/**
 * The iiBench {@code purchases_index} table as four tables of one engine: the primary index on the
 * auto-increment {@code transactionid} and the secondary indexes {@code marketsegment (price,
 * customerid)}, {@code registersegment (cashregisterid, price, customerid)} and {@code pdc (price,
 * dateandtime, customerid)}. Each secondary entry is the indexed columns followed by the primary key
 * (so it is unique) with an empty value, as in the original benchmark.
 *
 * <p>Row {@code id}'s column values are a pure function of {@code id} (random-looking, uniform in
 * the original's ranges), so a row can be deleted later, or checked, without reading it. Columns
 * are big-endian so that byte order is numeric order ({@code price} is a non-negative float).
 */
public final class IiBench {
    /** Table names. */
    public static final String PRIMARY = "purchases_index";
    /** Secondary index on (price, customerid). */
    public static final String MARKET = "marketsegment";
    /** Secondary index on (cashregisterid, price, customerid). */
    public static final String REGISTER = "registersegment";
    /** Secondary index on (price, dateandtime, customerid). */
    public static final String PDC = "pdc";
    /** Rows per batch (per transaction where the engine has them). */
    public static final int BATCH_ROWS = 1_000;
    /** Primary key bytes. */
    public static final int KEY_BYTES = 8;
    /** Primary value bytes: dateandtime 8, cashregisterid 4, customerid 4, productid 4, price 4. */
    public static final int VALUE_BYTES = 24;
    /** Logical bytes one row puts in the four tables: 8 + 24 + 16 + 20 + 24. */
    public static final int ROW_BYTES = KEY_BYTES + VALUE_BYTES + 16 + 20 + 24;
    /** Logical bytes of the four keys a row's delete names. */
    public static final int DELETE_BYTES = KEY_BYTES + 16 + 20 + 24;
    private static final byte[] EMPTY = new byte[0];
    private static final long BASE_MILLIS = 1_700_000_000_000L;

    private final Table primary;
    private final Table market;
    private final Table register;
    private final Table pdc;

    /** The four tables of {@code engine}, created when absent. */
    public IiBench(EngineAdapter engine) {
        this.primary = engine.table(PRIMARY);
        this.market = engine.table(MARKET);
        this.register = engine.table(REGISTER);
        this.pdc = engine.table(PDC);
    }

    /** The primary index. */
    public Table primary() {
        return primary;
    }

    /** Puts row {@code id} into the four tables. */
    public void insert(long id) {
        Row r = new Row(id);
        primary.put(primaryKey(id), r.value());
        market.put(r.marketKey(), EMPTY);
        register.put(r.registerKey(), EMPTY);
        pdc.put(r.pdcKey(), EMPTY);
    }

    /** Deletes row {@code id} from the four tables (blind deletes: its columns are recomputed). */
    public void delete(long id) {
        Row r = new Row(id);
        primary.delete(primaryKey(id));
        market.delete(r.marketKey());
        register.delete(r.registerKey());
        pdc.delete(r.pdcKey());
    }

    /** The primary key of row {@code id}. */
    public static byte[] primaryKey(long id) {
        return ByteBuffer.allocate(KEY_BYTES).putLong(id).array();
    }

    /** A key that sorts right after row {@code id}'s primary key and before the next one: a miss. */
    public static byte[] missKey(long id) {
        return ByteBuffer.allocate(KEY_BYTES + 1).putLong(id).put((byte) 0).array();
    }

    /** The row id in a primary key. */
    public static long id(byte[] primaryKey) {
        return ByteBuffer.wrap(primaryKey).getLong();
    }

    /** The primary value of row {@code id}, for checks. */
    public static byte[] value(long id) {
        return new Row(id).value();
    }

    /** Column values of one row. */
    private static final class Row {
        final long id;
        final long dateAndTime;
        final int cashRegisterId;
        final int customerId;
        final int productId;
        final float price;

        Row(long id) {
            this.id = id;
            long a = mix(id);
            long b = mix(id ^ 0x6A09E667F3BCC909L);
            this.dateAndTime = BASE_MILLIS + id * 10 + (a & 7);
            this.cashRegisterId = (int) Long.remainderUnsigned(a >>> 3, 1_001);
            this.customerId = (int) Long.remainderUnsigned(a >>> 20, 100_001);
            this.productId = (int) Long.remainderUnsigned(b, 10_001);
            this.price = Long.remainderUnsigned(b >>> 20, 500_000) / 100f;
        }

        byte[] value() {
            return ByteBuffer.allocate(VALUE_BYTES).putLong(dateAndTime).putInt(cashRegisterId).putInt(customerId)
                    .putInt(productId).putFloat(price).array();
        }

        byte[] marketKey() {
            return ByteBuffer.allocate(16).putFloat(price).putInt(customerId).putLong(id).array();
        }

        byte[] registerKey() {
            return ByteBuffer.allocate(20).putInt(cashRegisterId).putFloat(price).putInt(customerId).putLong(id)
                    .array();
        }

        byte[] pdcKey() {
            return ByteBuffer.allocate(24).putFloat(price).putLong(dateAndTime).putInt(customerId).putLong(id)
                    .array();
        }
    }

    /** A 64-bit finalizer (the SplitMix64 one) turning sequential ids into independent-looking bits. */
    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
