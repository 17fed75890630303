package io.sluice.broker.backfill;

import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Backfill state written before the broker log schema's version 3, as bytes the old encoder produced (captured
 * before it was removed): it still reads, through {@link BackfillMessages#decodeEntry} like any backfill entry.
 */
class LegacyBackfillLayoutTest
{
    /** Register("bf-1", "file", 1 task, first task 1, at 1_000) as version 1 wrote it, without a latest position. */
    static final String VERSION_1_REGISTER =
        "00001800020002002200000001010400000062662d310400000066696c650100000001000000e803000000000000";

    /** Entries of version 2, each a whole template 24 log entry, with what they hold. */
    private static final Map<String, BackfillEntry> VERSION_2_ENTRIES = Map.of(
        "00001800020002002a00000002010400000062662d310400000066696c650400000009000000e803000000000000b004" +
        "000000000000",
        new BackfillEntry.Register("bf-1", "file", 4, 9, 1_000, 1_200),
        "00001800020002001600000002020400000062662d3109000000d007000000000000",
        new BackfillEntry.AttemptStarted("bf-1", 9, 2_000),
        "00001800020002001e00000002030400000062662d3109000000cb04fb711f010000b80b000000000000",
        new BackfillEntry.Checkpoint("bf-1", 9, 1234567890123L, 3_000),
        "00001800020002002200000002040400000062662d31090000000700000074696d656f757401a00f000000000000",
        new BackfillEntry.AttemptFailed("bf-1", 9, "timeout", true, 4_000),
        "00001800020002001200000002050400000062662d318813000000000000",
        new BackfillEntry.Cancel("bf-1", 5_000));

    /** A snapshot's backfills field as versions 1 and 2 of the snapshot held it: two tasks. */
    static final String SNAPSHOT_TASKS =
        "01020000000400000062662d310400000066696c6501000000f501000000000000520300000000000058020000000000" +
        "00020000000104000000626f6f6de803000000000000d0070000000000000400000062662d310400000066696c650200" +
        "00005303000000000000b0040000000000005203000000000000000000000000000000e803000000000000e803000000" +
        "000000";

    static final List<BackfillTask> SNAPSHOT_TASKS_HOLD = List.of(
        new BackfillTask("bf-1", "file", 1, 501, 850, 600, 2, BackfillTaskState.RUNNING, "boom", 1_000, 2_000),
        new BackfillTask("bf-1", "file", 2, 851, 1_200, 850, 0, BackfillTaskState.PENDING, "", 1_000, 1_000));

    @Test
    void everyEntryTypeWrittenBeforeReadsAsItWasWritten()
    {
        VERSION_2_ENTRIES.forEach((hex, entry) -> assertThat(decode(BitUtil.fromHex(hex))).isEqualTo(entry));
        assertThat(decode(BitUtil.fromHex(VERSION_1_REGISTER)))
            .isEqualTo(new BackfillEntry.Register("bf-1", "file", 1, 1, 1_000, BackfillEntry.Register.LATEST_AT_APPLY));
    }

    @Test
    void aVersion2RegistrationMustBeWholeWhileAVersion1OneMayEndBeforeItsLatestPosition()
    {
        // The version 1 bytes marked version 2: the same fields, the last one missing.
        final byte[] truncatedVersion2 = BitUtil.fromHex(VERSION_1_REGISTER);
        truncatedVersion2[payloadOffset()] = 2;

        assertThatThrownBy(() -> decode(truncatedVersion2)).as("a version 2 entry is whole")
            .isInstanceOf(BackfillCodecException.class).hasMessageContaining("truncated");
    }

    @Test
    void garbageInAnOldEntryIsRejectedWithAReason()
    {
        final byte[] valid = BitUtil.fromHex(VERSION_2_ENTRIES.keySet().stream()
            .filter(hex -> VERSION_2_ENTRIES.get(hex) instanceof BackfillEntry.Checkpoint).findFirst().orElseThrow());
        final int payload = payloadOffset();

        final byte[] version9 = valid.clone();
        version9[payload] = 9;
        assertThatThrownBy(() -> decode(version9)).hasMessageContaining("version 9");
        final byte[] type77 = valid.clone();
        type77[payload + 1] = 77;
        assertThatThrownBy(() -> decode(type77)).hasMessageContaining("type 77");
        final byte[] hugeString = valid.clone();
        new UnsafeBuffer(hugeString).putInt(payload + 2, Integer.MAX_VALUE, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(hugeString)).hasMessageContaining("out of range");
        final byte[] trailing = java.util.Arrays.copyOf(valid, valid.length + 1);
        new UnsafeBuffer(trailing).putInt(payload - 4, valid.length + 1 - payload, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(trailing)).hasMessageContaining("trailing");
        final byte[] pastTheEnd = valid.clone();
        new UnsafeBuffer(pastTheEnd).putInt(payload - 4, valid.length, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertThatThrownBy(() -> decode(pastTheEnd)).isInstanceOf(BackfillCodecException.class);
        assertThatThrownBy(() -> decode(java.util.Arrays.copyOf(valid, payload - 2))).isInstanceOf(BackfillCodecException.class);
    }

    @Test
    void aSnapshotsTasksWrittenBeforeReadAsTheyWereWritten()
    {
        final byte[] bytes = BitUtil.fromHex(SNAPSHOT_TASKS);
        assertThat(LegacyBackfillLayout.decodeSnapshot(new UnsafeBuffer(bytes), 0, bytes.length))
            .isEqualTo(SNAPSHOT_TASKS_HOLD);

        assertThatThrownBy(() -> LegacyBackfillLayout.decodeSnapshot(new UnsafeBuffer(bytes), 0, bytes.length - 3))
            .isInstanceOf(BackfillCodecException.class).hasMessageContaining("truncated");
        final byte[] badState = bytes.clone();
        badState[1 + 4 + 8 + 8 + 4 + 8 + 8 + 8 + 4] = 9; // the first task's state code
        assertThatThrownBy(() -> LegacyBackfillLayout.decodeSnapshot(new UnsafeBuffer(badState), 0, badState.length))
            .isInstanceOf(BackfillCodecException.class).hasMessageContaining("state code 9");
    }

    /** The payload's offset in a template 24 entry: message header, empty block, var-data length. */
    private static int payloadOffset()
    {
        return io.sluice.broker.log.codecs.MessageHeaderEncoder.ENCODED_LENGTH +
            io.sluice.broker.log.codecs.BackfillEntryEncoder.BLOCK_LENGTH +
            io.sluice.broker.log.codecs.BackfillEntryEncoder.payloadHeaderLength();
    }

    private static BackfillEntry decode(final byte[] entry)
    {
        return BackfillMessages.decodeEntry(new UnsafeBuffer(entry), 0, entry.length);
    }
}
