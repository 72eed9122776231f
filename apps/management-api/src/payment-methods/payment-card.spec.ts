import { DomainError } from '@switchboard/contracts';
import { cardBrand, luhnValid, maskNumber, storedCard } from './payment-card.js';

describe('payment cards', () => {
  it('derives the brand from the IIN', () => {
    expect(cardBrand('4111111111111111')).toBe('Visa');
    expect(cardBrand('5555555555554444')).toBe('Mastercard');
    expect(cardBrand('2223003122003222')).toBe('Mastercard');
    expect(cardBrand('378282246310005')).toBe('American Express');
    expect(cardBrand('6011111111111117')).toBe('Discover');
    expect(cardBrand('3530111333300000')).toBe('JCB');
    expect(cardBrand('30569309025904')).toBe('Diners Club');
    expect(cardBrand('6200000000000005')).toBe('UnionPay');
    expect(cardBrand('9999999999999995')).toBe('Unknown');
  });

  it('checks the Luhn digit and masks all but the last four digits', () => {
    expect(luhnValid('4111111111111111')).toBe(true);
    expect(luhnValid('4111111111111112')).toBe(false);
    expect(maskNumber('378282246310005')).toBe('***********0005');
  });

  it('never keeps the number or the security code', () => {
    const card = storedCard(
      { number: '4111-1111-1111-1111', securityCode: '123', expiryMonth: 1, maskedNumber: 'x' },
      null,
    );
    expect(card).toEqual({ expiryMonth: 1, maskedNumber: '************1111', brand: 'Visa' });
    expect(JSON.stringify(card)).not.toMatch(/4111-1111|4111111111111111|123/);
  });

  it('keeps the previous masked number and brand when no new number comes', () => {
    expect(
      storedCard({ expiryYear: 2031 }, { maskedNumber: '************1111', brand: 'Visa', expiryYear: 2030 }),
    ).toEqual({ expiryYear: 2031, maskedNumber: '************1111', brand: 'Visa' });
  });

  it('refuses implausible numbers and codes, naming the field', () => {
    expect(() => storedCard({ number: '4111111111111112' }, null)).toThrow(DomainError);
    expect(() => storedCard({ number: '4111' }, null)).toThrow(/card.number/);
    expect(() => storedCard({ securityCode: '12a' }, null)).toThrow(/card.securityCode/);
  });
});
