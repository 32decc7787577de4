//! SNMPv2c messages (RFC 3416): GetRequest and GetBulkRequest written, a Response read, each
//! variable binding's value kept as one of the few types IF-MIB uses.
//!
//! ```
//! use iopath::observe::snmp::message::{Request, read_response};
//! let bytes = Request::get(7, &[vec![1, 3, 6, 1, 2, 1, 1, 5, 0]]).encode(b"public");
//! assert_eq!(bytes[0], 0x30);
//! assert!(read_response(&bytes, b"public").is_err(), "a request is no response");
//! ```

use super::ber::{
    BerError, Reader, TAG_COUNTER32, TAG_COUNTER64, TAG_GAUGE32, TAG_INTEGER, TAG_NULL,
    TAG_OCTET_STRING, TAG_OID, TAG_SEQUENCE, TAG_TIMETICKS, encode, encode_integer, encode_oid,
    oid_arcs, signed, unsigned,
};

/// The version field of SNMPv2c.
const VERSION_2C: i64 = 1;
/// GetRequest-PDU.
const PDU_GET: u8 = 0xa0;
/// Response-PDU.
const PDU_RESPONSE: u8 = 0xa2;
/// GetBulkRequest-PDU.
const PDU_GET_BULK: u8 = 0xa5;
/// The most variable bindings read from one answer.
pub const MAX_BINDINGS: usize = 4096;

/// A request to send.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// Its id, echoed in the response.
    pub id: i32,
    kind: u8,
    /// GetBulk's non-repeaters, else 0.
    non_repeaters: i64,
    /// GetBulk's max-repetitions, else 0.
    max_repetitions: i64,
    oids: Vec<Vec<u32>>,
}

impl Request {
    /// A GetRequest of `oids`.
    pub fn get(id: i32, oids: &[Vec<u32>]) -> Request {
        Request {
            id,
            kind: PDU_GET,
            non_repeaters: 0,
            max_repetitions: 0,
            oids: oids.to_vec(),
        }
    }

    /// A GetBulkRequest: the successor of each of `oids`, and of the next `max_repetitions - 1`
    /// rows after it.
    pub fn get_bulk(id: i32, max_repetitions: u16, oids: &[Vec<u32>]) -> Request {
        Request {
            id,
            kind: PDU_GET_BULK,
            non_repeaters: 0,
            max_repetitions: i64::from(max_repetitions),
            oids: oids.to_vec(),
        }
    }

    /// The message with `community`.
    pub fn encode(&self, community: &[u8]) -> Vec<u8> {
        let bindings: Vec<u8> = self
            .oids
            .iter()
            .flat_map(|oid| {
                let mut binding = encode_oid(oid);
                binding.extend(encode(TAG_NULL, &[]));
                encode(TAG_SEQUENCE, &binding)
            })
            .collect();
        let mut pdu = encode_integer(TAG_INTEGER, i64::from(self.id));
        pdu.extend(encode_integer(TAG_INTEGER, self.non_repeaters));
        pdu.extend(encode_integer(TAG_INTEGER, self.max_repetitions));
        pdu.extend(encode(TAG_SEQUENCE, &bindings));
        let mut message = encode_integer(TAG_INTEGER, VERSION_2C);
        message.extend(encode(TAG_OCTET_STRING, community));
        message.extend(encode(self.kind, &pdu));
        encode(TAG_SEQUENCE, &message)
    }
}

/// A variable's value, as far as IF-MIB needs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    /// INTEGER.
    Integer(i64),
    /// Counter32, Gauge32, TimeTicks, Counter64.
    Unsigned(u64),
    /// OCTET STRING.
    Bytes(Vec<u8>),
    /// noSuchObject, noSuchInstance, or a type not read here.
    Missing,
    /// endOfMibView: nothing follows.
    EndOfView,
}

/// A response.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Response {
    /// The request's id.
    pub id: i32,
    /// error-status (0: none; 2: noSuchName; 5: genErr …).
    pub error_status: i64,
    /// The variables, in order.
    pub bindings: Vec<(Vec<u32>, Value)>,
}

/// Reads a response to a message sent with `community`.
pub fn read_response(bytes: &[u8], community: &[u8]) -> Result<Response, BerError> {
    let mut outer = Reader::new(bytes);
    let mut message = Reader::new(outer.expect(TAG_SEQUENCE)?);
    if message.integer(TAG_INTEGER)? != VERSION_2C {
        return Err(BerError("not an SNMPv2c message"));
    }
    if message.expect(TAG_OCTET_STRING)? != community {
        return Err(BerError("another community"));
    }
    let mut pdu = Reader::new(message.expect(PDU_RESPONSE)?);
    let id = pdu.integer(TAG_INTEGER)?;
    let error_status = pdu.integer(TAG_INTEGER)?;
    let _error_index = pdu.integer(TAG_INTEGER)?;
    let mut list = Reader::new(pdu.expect(TAG_SEQUENCE)?);
    let mut bindings = Vec::new();
    while !list.is_empty() {
        if bindings.len() >= MAX_BINDINGS {
            return Err(BerError("too many variables"));
        }
        let mut binding = Reader::new(list.expect(TAG_SEQUENCE)?);
        let oid = oid_arcs(binding.expect(TAG_OID)?)?;
        let (tag, content) = binding.element()?;
        let value = match tag {
            TAG_INTEGER => Value::Integer(signed(content)?),
            TAG_COUNTER32 | TAG_GAUGE32 | TAG_TIMETICKS | TAG_COUNTER64 => {
                Value::Unsigned(unsigned(content)?)
            }
            TAG_OCTET_STRING => Value::Bytes(content.to_vec()),
            0x82 => Value::EndOfView,
            _ => Value::Missing,
        };
        bindings.push((oid, value));
    }
    Ok(Response {
        id: i32::try_from(id).map_err(|_| BerError("a request id beyond 32 bits"))?,
        error_status,
        bindings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A response as an agent writes it, built from the same encoders.
    fn response(id: i64, community: &[u8], bindings: &[(Vec<u32>, u8, Vec<u8>)]) -> Vec<u8> {
        let list: Vec<u8> = bindings
            .iter()
            .flat_map(|(oid, tag, content)| {
                let mut binding = encode_oid(oid);
                binding.extend(encode(*tag, content));
                encode(TAG_SEQUENCE, &binding)
            })
            .collect();
        let mut pdu = encode_integer(TAG_INTEGER, id);
        pdu.extend(encode_integer(TAG_INTEGER, 0));
        pdu.extend(encode_integer(TAG_INTEGER, 0));
        pdu.extend(encode(TAG_SEQUENCE, &list));
        let mut message = encode_integer(TAG_INTEGER, 1);
        message.extend(encode(TAG_OCTET_STRING, community));
        message.extend(encode(PDU_RESPONSE, &pdu));
        encode(TAG_SEQUENCE, &message)
    }

    #[test]
    fn a_get_bulk_is_written_as_rfc_3416_says() {
        let bytes = Request::get_bulk(0x1234, 10, &[vec![1, 3, 6, 1]]).encode(b"c");
        let expected = [
            0x30, 0x1d, 0x02, 0x01, 0x01, 0x04, 0x01, b'c', 0xa5, 0x15, 0x02, 0x02, 0x12, 0x34,
            0x02, 0x01, 0x00, 0x02, 0x01, 0x0a, 0x30, 0x09, 0x30, 0x07, 0x06, 0x03, 0x2b, 0x06,
            0x01, 0x05, 0x00,
        ];
        assert_eq!(bytes, expected);
    }

    #[test]
    fn a_response_gives_each_value_its_type() {
        let counter = vec![0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        let bytes = response(
            42,
            b"sw",
            &[
                (
                    vec![1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 1, 2],
                    TAG_OCTET_STRING,
                    b"eth1".to_vec(),
                ),
                (
                    vec![1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 6, 2],
                    TAG_COUNTER64,
                    counter,
                ),
                (
                    vec![1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 15, 2],
                    TAG_GAUGE32,
                    vec![0x03, 0xe8],
                ),
                (vec![1, 3, 6, 1, 2, 1, 31, 1, 1, 1, 99], 0x82, vec![]),
            ],
        );
        let read = read_response(&bytes, b"sw").unwrap();
        assert_eq!(read.id, 42);
        assert_eq!(read.bindings[0].1, Value::Bytes(b"eth1".to_vec()));
        assert_eq!(read.bindings[1].1, Value::Unsigned(u64::MAX));
        assert_eq!(read.bindings[2].1, Value::Unsigned(1000));
        assert_eq!(read.bindings[3].1, Value::EndOfView);
        assert!(read_response(&bytes, b"other").is_err());
        for cut in 0..bytes.len() {
            assert!(read_response(&bytes[..cut], b"sw").is_err(), "{cut}");
        }
    }
}
