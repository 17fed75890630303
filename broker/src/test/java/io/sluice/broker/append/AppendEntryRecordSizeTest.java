package io.sluice.broker.append;

import io.sluice.broker.log.codecs.RecordBodyEncoder;
import io.sluice.protocol.message.AppendLimits;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The record limits are counted in AppendLimits' record size; a record of an append batch (a RecordBody) must encode
 * in exactly that, and AppendEntries sizes batches by it.
 */
class AppendEntryRecordSizeTest
{
    @Test
    void aRecordInAnAppendBatchTakesWhatAppendLimitsCounts()
    {
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(256);
        final byte[] payload = new byte[17];
        final int keyed = new RecordBodyEncoder().wrap(buffer, 0).timestamp(1).key("key")
            .putPayload(payload, 0, payload.length).encodedLength();
        final int bare = new RecordBodyEncoder().wrap(buffer, 0).timestamp(2).key("").putPayload(payload, 0, 0)
            .encodedLength();

        assertThat(keyed).isEqualTo(AppendLimits.recordBytes(3, 17)).isEqualTo(AppendEntries.recordLength(3, 17));
        assertThat(bare).isEqualTo(AppendLimits.recordBytes(0, 0)).isEqualTo(AppendEntries.recordLength(0, 0));
    }
}
