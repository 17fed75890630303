package io.sluice.exporter.spi;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class RecordJsonTest
{
    @Test
    void writesTheContractLineWithThePayloadAsSent()
    {
        final String json = new String(RecordJson.toBytes(record("order-42", "{\"amount\":7}")), StandardCharsets.UTF_8);

        assertThat(json).isEqualTo(
            "{\"partitionId\":2,\"position\":123,\"key\":\"order-42\",\"timestamp\":1764420000000,\"payload\":{\"amount\":7}}");
    }

    @Test
    void escapesTheKeyAndWritesNullForAMissingKeyOrPayload()
    {
        assertThat(new String(RecordJson.toBytes(record("a\"b\\c\nd\u0001", "")), StandardCharsets.UTF_8))
            .contains("\"key\":\"a\\\"b\\\\c\\nd\\u0001\"").endsWith("\"payload\":null}");
        assertThat(new String(RecordJson.toBytes(record(null, "1")), StandardCharsets.UTF_8))
            .contains("\"key\":null");
    }

    private static CommittedRecord record(final String key, final String payload)
    {
        final byte[] keyBytes = key == null ? new byte[0] : key.getBytes(StandardCharsets.UTF_8);
        final byte[] payloadBytes = payload.getBytes(StandardCharsets.UTF_8);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[keyBytes.length + payloadBytes.length]);
        buffer.putBytes(0, keyBytes);
        buffer.putBytes(keyBytes.length, payloadBytes);
        return new CommittedRecord()
        {
            public int partitionId()
            {
                return 2;
            }

            public long position()
            {
                return 123;
            }

            public long timestamp()
            {
                return 1764420000000L;
            }

            public String key()
            {
                return key;
            }

            public DirectBuffer buffer()
            {
                return buffer;
            }

            public int keyOffset()
            {
                return 0;
            }

            public int keyLength()
            {
                return key == null ? -1 : keyBytes.length;
            }

            public int payloadOffset()
            {
                return keyBytes.length;
            }

            public int payloadLength()
            {
                return payloadBytes.length;
            }
        };
    }
}
