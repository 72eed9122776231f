import { EMPTY_SHA256, parseListObjectsV2, S3Client, signV4, uriEncode } from './s3-client.js';

describe('AWS Signature Version 4', () => {
  it('matches the GET Object example of the S3 documentation', () => {
    // "Signature Calculations for the Authorization Header", example GET Object (examplebucket, test.txt, Range
    // bytes=0-9).
    const headers = signV4({
      method: 'GET',
      url: new URL('https://examplebucket.s3.amazonaws.com/test.txt'),
      headers: { range: 'bytes=0-9' },
      payloadHash: EMPTY_SHA256,
      region: 'us-east-1',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      amzDate: '20130524T000000Z',
    });
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;range;x-amz-content-sha256;x-amz-date, Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41',
    );
  });

  it('encodes keys the S3 way', () => {
    expect(uriEncode('a b/c~d$e', true)).toBe('a%20b/c~d%24e');
    expect(uriEncode('a/b')).toBe('a%2Fb');
    const client = new S3Client({
      endpoint: 'http://127.0.0.1:9000',
      bucket: 'rec',
      region: 'us-east-1',
      accessKeyId: 'k',
      secretAccessKey: 's',
      pathStyle: true,
    });
    expect(client.objectUrl('org%2F1/app/x.webm').toString()).toBe('http://127.0.0.1:9000/rec/org%252F1/app/x.webm');
    const hosted = new S3Client({
      endpoint: 'https://s3.example.com',
      bucket: 'rec',
      region: 'eu-west-1',
      accessKeyId: 'k',
      secretAccessKey: 's',
      pathStyle: false,
    });
    expect(hosted.objectUrl('a/b.ogg').toString()).toBe('https://rec.s3.example.com/a/b.ogg');
  });

  it('signs a bucket listing as the GET Bucket example of the S3 documentation', () => {
    const client = new S3Client({
      endpoint: 'https://s3.amazonaws.com',
      bucket: 'examplebucket',
      region: 'us-east-1',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'x',
      pathStyle: false,
    });
    const url = client.bucketUrl({ 'max-keys': '2', prefix: 'J' });
    expect(url.toString()).toBe('https://examplebucket.s3.amazonaws.com/?max-keys=2&prefix=J');
    const headers = signV4({
      method: 'GET',
      url,
      headers: {},
      payloadHash: EMPTY_SHA256,
      region: 'us-east-1',
      accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
      secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
      amzDate: '20130524T000000Z',
    });
    expect(headers.authorization).toBe(
      'AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7',
    );
    const paths = new S3Client({
      endpoint: 'http://127.0.0.1:9000/',
      bucket: 'rec',
      region: 'us-east-1',
      accessKeyId: 'k',
      secretAccessKey: 's',
      pathStyle: true,
    });
    expect(paths.bucketUrl({ 'list-type': '2', prefix: 'org%2F1/a b/' }).toString()).toBe(
      'http://127.0.0.1:9000/rec?list-type=2&prefix=org%252F1%2Fa%20b%2F',
    );
  });
});

describe('ListObjectsV2 answers', () => {
  it('gives the keys (XML entities decoded) and the continuation', () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>rec</Name><Prefix>o/</Prefix><KeyCount>2</KeyCount>' +
      '<IsTruncated>true</IsTruncated><Contents><Key>o/a&amp;b.webm</Key><Size>3</Size></Contents><Contents><Key>o/c&#39;d.ogg</Key><Size>4</Size></Contents>' +
      '<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken></ListBucketResult>';
    expect(parseListObjectsV2(xml)).toEqual({
      keys: ['o/a&b.webm', "o/c'd.ogg"],
      truncated: true,
      nextToken: '1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=',
    });
    expect(
      parseListObjectsV2('<ListBucketResult><KeyCount>0</KeyCount><IsTruncated>false</IsTruncated></ListBucketResult>'),
    ).toEqual({ keys: [], truncated: false, nextToken: null });
  });
});
