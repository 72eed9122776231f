import { EMPTY_SHA256, S3Client, signV4, uriEncode } from './s3-client.js';

describe('AWS Signature Version 4', () => {
  it('matches the GET Object example of the S3 documentation', () => {
    // "Signature Calculations for the Authorization Header", example GET Object (examplebucket, test.txt, Range bytes=0-9).
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
    const client = new S3Client({ endpoint: 'http://127.0.0.1:9000', bucket: 'rec', region: 'us-east-1', accessKeyId: 'k', secretAccessKey: 's', pathStyle: true });
    expect(client.objectUrl('org%2F1/app/x.webm').toString()).toBe('http://127.0.0.1:9000/rec/org%252F1/app/x.webm');
    const hosted = new S3Client({ endpoint: 'https://s3.example.com', bucket: 'rec', region: 'eu-west-1', accessKeyId: 'k', secretAccessKey: 's', pathStyle: false });
    expect(hosted.objectUrl('a/b.ogg').toString()).toBe('https://rec.s3.example.com/a/b.ogg');
  });
});
